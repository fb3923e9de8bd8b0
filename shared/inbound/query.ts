import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { log } from '../platform/observability/log.ts';
import { decodeCursor, encodeCursor, type Positions } from '../platform/paging/cursor.ts';
import { type KeyStream, mergeStreams } from '../platform/paging/merge.ts';
import { keys, shardCount } from '../platform/table/keys.ts';
import { dateRangeOf } from '../platform/time/date-range.ts';
import {
  bodiesFitInline,
  type InboundContent,
  type InboundItem,
  inboundDetailsView,
  inboundSummaryView,
} from './model/inbound.ts';
import {
  deleteInbound,
  existingInbound,
  getInbound,
  getInbounds,
  type InboundIndexStream,
  queryInboundKeys,
} from './store/inbound.ts';

/** The inbound routes (docs/inbound.md): one received message in full, a page of them, a delete. */
export const defaultInboundLimit = 100;

const notFound = () =>
  new ServiceError(Code.NotFound, 'No such received message', {
    details: [{ field: 'inbound_uuid', message: 'Unknown received message' }],
  });

/** The caller's received message with its bodies and URLs; unknown and foreign alike are 112. */
/**
 * The S3 half (client, presigner) loads on the first call that needs it: a list reads no object,
 * and the query function's start stays small (docs/benchmarks.md, section 1).
 */
const objects = () => import('./store/inbound-objects.ts');

export async function getInboundDetails(inboundUuid: string, account: string) {
  const item = await getInbound(inboundUuid.toLowerCase());
  if (item === undefined || item.account_id !== account) throw notFound();
  const { getJsonObject, inboundUrlSeconds, objectUrl } = await objects();
  const [content, raw, attachments] = await Promise.all([
    item.objects.content === undefined ? undefined : getJsonObject<InboundContent>(item.objects.content),
    objectUrl(item.objects.raw, { contentType: 'message/rfc822' }),
    Promise.all(
      (item.attachments ?? []).map((attachment) =>
        objectUrl(attachment.key, { contentType: attachment.content_type, download: attachment.filename }),
      ),
    ),
  ]);
  // Bodies too large for the answer move behind a URL of the stored content (JSON).
  const contentUrl =
    content === undefined || item.objects.content === undefined || bodiesFitInline(content)
      ? undefined
      : await objectUrl(item.objects.content, { contentType: 'application/json' });
  return inboundDetailsView(item, content, {
    raw,
    attachments,
    expiresAt: new Date(Date.now() + inboundUrlSeconds * 1000),
    ...(contentUrl === undefined ? {} : { content: contentUrl }),
  });
}

export interface InboundFilters {
  date_from?: string;
  date_to?: string;
  recipient?: string;
  sender?: string;
  limit?: number;
}

/**
 * The index streams of a filter (docs/data-model.md, "Inbound"): the account's shards of gsi2, or,
 * for one recipient or one sender, that address's shards of gsi1 or gsi3. Every received message
 * is on one shard of each, so the merge of one family's shards is the whole list.
 */
function streamsFor(
  account: string,
  filters: InboundFilters,
): Array<{ id: string; stream: InboundIndexStream }> {
  return Array.from({ length: shardCount.account }, (_, shard) => ({
    id: String(shard),
    stream:
      filters.recipient !== undefined
        ? { index: 'gsi1', partition: keys.inboundToRecipient(account, filters.recipient, shard) }
        : filters.sender !== undefined
          ? { index: 'gsi3', partition: keys.inboundFromSender(account, filters.sender, shard) }
          : { index: 'gsi2', partition: keys.inboundOfAccount(account, shard) },
  }));
}

const uuidOf = (sortKey: string) => sortKey.slice(sortKey.indexOf('#') + 1);

/**
 * A page of the caller's received mail, newest first: an exact merge of the shards (the same merge
 * as the message list), then one BatchGetItem for the page. The date range bounds the sort keys,
 * so the work is the page plus one read-ahead chunk per shard, whatever the table holds.
 */
export async function listInbound(
  account: string,
  filters: InboundFilters,
  cursor: string | undefined,
): Promise<{ inbound: ReturnType<typeof inboundSummaryView>[]; count: number; next_cursor: string | null }> {
  const { from, to } = dateRangeOf(filters);
  const limit = filters.limit ?? defaultInboundLimit;
  const range = {
    ...(from === undefined ? {} : { receivedFrom: from.toISOString() }),
    ...(to === undefined ? {} : { receivedTo: to.toISOString() }),
  };
  const fingerprint = {
    inbound: true,
    recipient: filters.recipient ?? null,
    sender: filters.sender ?? null,
    from: range.receivedFrom ?? null,
    to: range.receivedTo ?? null,
  };
  const streams: KeyStream[] = streamsFor(account, filters).map(({ id, stream }) => ({
    id,
    fetch: async (after, count) => {
      const page = await queryInboundKeys(stream, {
        ...range,
        ...(after === undefined ? {} : { after }),
        limit: count,
      });
      return { keys: page.keys, more: page.more, evaluated: page.scannedCount };
    },
  }));
  let positions: Positions = Object.fromEntries(streams.map((stream) => [stream.id, { done: false }]));
  if (cursor !== undefined) {
    const decoded = decodeCursor(
      cursor,
      account,
      fingerprint,
      streams.map((stream) => stream.id),
    );
    if (!decoded.ok) {
      throw new ServiceError(Code.InvalidInput, undefined, {
        details: [{ field: 'cursor', message: decoded.message }],
      });
    }
    positions = decoded.positions;
  }
  const merged = await mergeStreams(streams, positions, limit);
  const items = await getInbounds(merged.taken.map((entry) => uuidOf(entry.key)));
  const page = merged.taken
    .map((entry) => items.get(uuidOf(entry.key)))
    .filter((item): item is InboundItem => item !== undefined && item.account_id === account);
  return {
    inbound: page.map(inboundSummaryView),
    count: page.length,
    next_cursor: encodeCursor(account, fingerprint, merged.positions),
  };
}

/**
 * Deletes one of the caller's received messages (112 when unknown or foreign). Its objects go too,
 * unless another recipient's item of the same received message still uses them.
 */
export async function deleteInboundMessage(inboundUuid: string, account: string) {
  const item = await deleteInbound(inboundUuid.toLowerCase(), account);
  if (item === undefined) throw notFound();
  const remaining = await existingInbound(item.siblings ?? []);
  if (remaining.length === 0) {
    const { deleteInboundObjects } = await objects();
    await deleteInboundObjects([
      item.objects.raw,
      ...(item.objects.content === undefined ? [] : [item.objects.content]),
      ...(item.attachments ?? []).map((attachment) => attachment.key),
    ]);
  }
  log('info', 'inbound message deleted', {
    inbound_uuid: item.inbound_uuid,
    account,
    objects_kept_for_siblings: remaining.length > 0,
  });
  return { inbound_uuid: item.inbound_uuid, deleted: true };
}
