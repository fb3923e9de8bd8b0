import { decodeCursor, encodeCursor, type Positions } from '../../domain/messages/cursor.ts';
import { type KeyStream, mergeStreams, workBudget } from '../../domain/messages/merge.ts';
import { detailsView, type MessageItem, summaryView } from '../../domain/messages/message.ts';
import { messageStatuses } from '../../domain/messages/statuses.ts';
import { Code } from '../../errors/catalogue.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { inFlightShardOf, isInFlight, keys, shardCount } from '../../repositories/keys.ts';
import { getMessage, getMessages, type IndexStream, queryIndexKeys } from '../../repositories/messages.ts';
import type { MessageQueryRequest } from '../../schemas/messages.ts';
import { parseDateWithOffset } from '../../time/format.ts';

export const defaultQueryLimit = 100;
/** The filter fingerprint of an unfiltered query (its cursor is bound to "every status"). */
const allStatuses = '*';

/** One message of the caller in full; unknown and foreign messages alike are 112. */
export async function getMessageDetails(uuid: string, account: string) {
  const item = await getMessage(uuid.toLowerCase());
  if (item === undefined || item.account_id !== account) {
    throw new ServiceError(Code.NotFound, 'No such message', {
      details: [{ field: 'message_uuid', message: 'Unknown message' }],
    });
  }
  return detailsView(item);
}

export interface MessagePage {
  messages: ReturnType<typeof summaryView>[];
  count: number;
  next_cursor: string | null;
}

/**
 * The index streams a filter reads (docs/data-model.md, "Queries"): per settled or held status,
 * gsi2's shards of the account; for `queued`/`processing`, the account's in-flight shards of gsi3,
 * whose entries are read to keep only the asked statuses (as the items are now, so a message that
 * settled since the index was read stays in an unfiltered list). Without a status filter, every status:
 * a message is on exactly one of those partitions at a time, so the merge is the whole list.
 */
function streamsFor(
  account: string,
  statuses: readonly string[],
  range: { createdFrom?: string; createdTo?: string },
  cache: Map<string, MessageItem>,
): KeyStream[] {
  const shards = Array.from({ length: shardCount.account }, (_, shard) => shard);
  const keyStream = (id: string, stream: IndexStream): KeyStream => ({
    id,
    fetch: async (after, limit) => {
      const page = await queryIndexKeys(stream, {
        ...range,
        ...(after === undefined ? {} : { after }),
        limit,
      });
      return { keys: page.keys, more: page.more, evaluated: page.scannedCount };
    },
  });
  const streams: KeyStream[] = [];
  for (const status of statuses.filter((status) => !isInFlight(status)))
    for (const shard of shards)
      streams.push(
        keyStream(`${status}/${shard}`, {
          index: 'gsi2',
          partition: keys.messagesOfAccountByStatus(account, status, shard),
          prefix: '',
        }),
      );
  const inFlight = statuses.filter(isInFlight);
  if (inFlight.length > 0) {
    for (const shard of shards) {
      const stream: IndexStream = {
        index: 'gsi3',
        partition: keys.inFlight(inFlightShardOf(account, shard)),
        prefix: `${account}#`,
      };
      streams.push({
        id: `inflight/${shard}`,
        fetch: async (after, limit) => {
          const page = await queryIndexKeys(stream, {
            ...range,
            ...(after === undefined ? {} : { after }),
            limit,
          });
          const items = await getMessages(page.keys.map(uuidOf));
          // The items are read consistently: one that settled since the index was read is kept if
          // its new status is asked too (the merge shows it once if its new stream has it as well).
          const kept = page.keys.filter((key) => {
            const item = items.get(uuidOf(key));
            if (item === undefined || item.account_id !== account || !statuses.includes(item.status))
              return false;
            cache.set(key, item);
            return true;
          });
          return {
            keys: kept,
            more: page.more,
            evaluated: page.scannedCount,
            ...(page.keys.length === 0 ? {} : { last: page.keys[page.keys.length - 1] }),
          };
        },
      });
    }
  }
  return streams;
}

const uuidOf = (sortKey: string) => sortKey.slice(sortKey.indexOf('#') + 1);

/**
 * A page of the caller's messages, newest first: an exact merge of the index shards the filters
 * name (see `streamsFor` and `mergeStreams`), then one BatchGetItem for the page's items. Dates
 * bound the index sort keys, so DynamoDB evaluates the page plus at most one read-ahead chunk per
 * shard, whatever the table holds. Streams that drop what they read (the in-flight one, and any
 * filter that reads entries it may not keep) are held to the page's work budget (`workBudget`): past
 * it the page ends early, possibly short or empty, with a cursor that continues where the reading
 * stopped. `scannedCount` (index entries DynamoDB evaluated) and `budgetReached` are for tests and
 * the debug log, not the response.
 */
export async function listMessages(
  account: string,
  filters: NonNullable<MessageQueryRequest['filters']>,
  cursor: string | undefined,
): Promise<MessagePage & { scannedCount: number; budgetReached: boolean }> {
  const statuses: string[] =
    filters.status === undefined
      ? [allStatuses]
      : [...new Set(Array.isArray(filters.status) ? filters.status : [filters.status])].sort();
  const createdFrom = filters.date_from === undefined ? undefined : parseDateWithOffset(filters.date_from);
  const createdTo = filters.date_to === undefined ? undefined : parseDateWithOffset(filters.date_to);
  if (
    (filters.date_from !== undefined && createdFrom === undefined) ||
    (filters.date_to !== undefined && createdTo === undefined)
  ) {
    throw new ServiceError(Code.InvalidInput, undefined, {
      details: [{ field: 'filters', message: 'date_from and date_to must be ISO 8601 with an offset' }],
    });
  }
  const limit = filters.limit ?? defaultQueryLimit;
  const fingerprint = { statuses, from: createdFrom?.toISOString(), to: createdTo?.toISOString() };
  const cache = new Map<string, MessageItem>();
  const streams = streamsFor(
    account,
    statuses.includes(allStatuses) ? messageStatuses : statuses,
    {
      ...(createdFrom === undefined ? {} : { createdFrom: createdFrom.toISOString() }),
      ...(createdTo === undefined ? {} : { createdTo: createdTo.toISOString() }),
    },
    cache,
  );
  const streamIds = streams.map((stream) => stream.id);

  let positions: Positions = Object.fromEntries(streamIds.map((id) => [id, { done: false }]));
  if (cursor !== undefined) {
    const decoded = decodeCursor(cursor, account, fingerprint, streamIds);
    if (!decoded.ok)
      throw new ServiceError(Code.InvalidInput, undefined, {
        details: [{ field: 'cursor', message: decoded.message }],
      });
    positions = decoded.positions;
  }

  const merged = await mergeStreams(streams, positions, limit, workBudget(limit, streams.length));
  const missing = merged.taken.filter((entry) => !cache.has(entry.key)).map((entry) => uuidOf(entry.key));
  const read = missing.length === 0 ? new Map<string, MessageItem>() : await getMessages(missing);
  const items = merged.taken
    .map((entry) => cache.get(entry.key) ?? read.get(uuidOf(entry.key)))
    .filter((item): item is MessageItem => item !== undefined && item.account_id === account);
  return {
    messages: items.map(summaryView),
    count: items.length,
    next_cursor: encodeCursor(account, fingerprint, merged.positions),
    scannedCount: merged.evaluated,
    budgetReached: merged.budgetReached,
  };
}
