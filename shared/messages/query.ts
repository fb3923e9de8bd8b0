import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { decodeCursor, encodeCursor, type Positions } from '../platform/paging/cursor.ts';
import { type KeyStream, mergeStreams, workBudget } from '../platform/paging/merge.ts';
import { keys, shardCount } from '../platform/table/keys.ts';
import { parseDateWithOffset } from '../platform/time/format.ts';
import { detailsView, type MessageItem, summaryView } from './model/message.ts';
import { messageStatuses } from './model/statuses.ts';
import { streamOf } from './model/stream.ts';
import { subjectMatcher } from './model/subject-search.ts';
import { metadataTerm, recipientTerm, type SearchTerm, tagTerm, termDigest, termsOf } from './model/terms.ts';
import { trackingViews } from './model/tracking-view.ts';
import type { MessageQueryRequest } from './schemas.ts';
import { laneOf, statusesOfLane } from './store/message-index.ts';
import { getMessage, getMessages, type IndexStream, queryIndexKeys } from './store/messages.ts';
import { trackingRecordsOf } from './store/tracking-records.ts';

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
  const tracking = trackingViews(await trackingRecordsOf(item.message_uuid));
  return detailsView(item, tracking);
}

export interface MessagePage {
  messages: ReturnType<typeof summaryView>[];
  count: number;
  next_cursor: string | null;
}

/** Keeps a message read from a stream: the caller's, and matching what the filters ask of the item. */
type Keep = (item: MessageItem) => boolean;

/**
 * One stream of index keys for the merge. With `keep`, the stream reads its entries' items
 * (consistently, one BatchGetItem per read) and passes on only those kept, as the items are now;
 * the items are cached for the page. Without it, the page's items are read once at the end.
 */
function keyStream(
  id: string,
  stream: IndexStream,
  range: { createdFrom?: string; createdTo?: string },
  cache: Map<string, MessageItem>,
  keep?: Keep,
): KeyStream {
  return {
    id,
    fetch: async (after, limit) => {
      const page = await queryIndexKeys(stream, {
        ...range,
        ...(after === undefined ? {} : { after }),
        limit,
      });
      if (keep === undefined) return { keys: page.keys, more: page.more, evaluated: page.scannedCount };
      const items = await getMessages(page.keys.map(uuidOf));
      const kept = page.keys.filter((key) => {
        const item = items.get(uuidOf(key));
        if (item === undefined || !keep(item)) return false;
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
  };
}

/**
 * The index streams a status filter reads (docs/data-model.md, "Queries"): the gsi2 shards of the
 * account's listing lanes that hold the asked statuses. A lane holding statuses that were not asked
 * (the accepted lane, for `delivered` alone or for a transient status) is read with its entries'
 * items, to keep only the asked statuses (as the items are now) and the caller's account. Without a
 * status filter, every lane and no keep: a message is on exactly one lane at a time, so the merge
 * is the whole list.
 */
function statusStreams(
  account: string,
  statuses: readonly string[],
  range: { createdFrom?: string; createdTo?: string },
  cache: Map<string, MessageItem>,
  also?: Keep,
): KeyStream[] {
  const streams: KeyStream[] = [];
  for (const lane of [...new Set(statuses.map(laneOf))]) {
    const whole = statusesOfLane(lane, messageStatuses).every((status) => statuses.includes(status));
    const keep: Keep | undefined =
      whole && also === undefined
        ? undefined
        : (item) =>
            item.account_id === account &&
            (whole || statuses.includes(item.status)) &&
            (also === undefined || also(item));
    for (const shard of shards)
      streams.push(
        keyStream(
          `${lane}/${shard}`,
          { index: 'gsi2', partition: keys.messagesOfAccountByLane(account, lane, shard) },
          range,
          cache,
          keep,
        ),
      );
  }
  return streams;
}

/**
 * The search filters (`tag`, `metadata`, `recipient`): one of them drives the query through its
 * search entries (`TERM#<account>#<digest>#<shard>`, one stream per account shard); the others,
 * a status filter, the `subject` text and the `stream` are checked on the items the streams read. A recipient is the likeliest to
 * be rare, then a metadata pair, then a tag, so that order picks the driving term.
 */
function searchOf(filters: Filters): { drive: SearchTerm; also: SearchTerm[] } | undefined {
  const terms: SearchTerm[] = [];
  if (filters.recipient !== undefined) terms.push(recipientTerm(filters.recipient.email));
  for (const [key, value] of Object.entries(filters.metadata ?? {})) terms.push(metadataTerm(key, value));
  if (filters.tag !== undefined) terms.push(tagTerm(filters.tag));
  const [drive, ...also] = terms;
  return drive === undefined ? undefined : { drive, also };
}

function searchStreams(
  account: string,
  search: { drive: SearchTerm; also: SearchTerm[] },
  statuses: readonly string[] | undefined,
  range: { createdFrom?: string; createdTo?: string },
  cache: Map<string, MessageItem>,
  alsoKeep?: Keep,
): KeyStream[] {
  const digest = termDigest(search.drive);
  const also = search.also.map((term) => `${term.kind}:${term.text}`);
  const keep: Keep | undefined =
    statuses === undefined && also.length === 0 && alsoKeep === undefined
      ? undefined
      : (item) => {
          if (item.account_id !== account) return false;
          if (statuses !== undefined && !statuses.includes(item.status)) return false;
          if (alsoKeep !== undefined && !alsoKeep(item)) return false;
          const has = new Set(termsOf(item).map((term) => `${term.kind}:${term.text}`));
          return also.every((term) => has.has(term));
        };
  return shards.map((shard) =>
    keyStream(
      `term/${shard}`,
      { index: 'table', partition: keys.searchTerm(account, digest, shard) },
      range,
      cache,
      keep,
    ),
  );
}

const uuidOf = (sortKey: string) => sortKey.slice(sortKey.indexOf('#') + 1);
const shards = Array.from({ length: shardCount.account }, (_, shard) => shard);
type Filters = NonNullable<MessageQueryRequest['filters']>;

/**
 * A page of the caller's messages, newest first: an exact merge of the index shards the filters
 * name (see `statusStreams`, `searchStreams` and `mergeStreams`), then one BatchGetItem for the
 * page's items. Dates bound the index sort keys, so DynamoDB evaluates the page plus at most one
 * read-ahead chunk per shard, whatever the table holds. Streams that drop what they read (a lane
 * read for some of its statuses, and any filter that reads entries it may not keep) are held to the page's work budget (`workBudget`): past
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
  const search = searchOf(filters);
  const fingerprint = {
    statuses,
    ...(filters.stream === undefined ? {} : { stream: filters.stream }),
    from: createdFrom?.toISOString(),
    to: createdTo?.toISOString(),
    ...(search === undefined
      ? {}
      : { terms: [search.drive, ...search.also].map((term) => `${term.kind}:${termDigest(term)}`) }),
    ...(filters.subject === undefined ? {} : { subject: filters.subject.trim() }),
  };
  const matchesSubject = filters.subject === undefined ? undefined : subjectMatcher(filters.subject);
  const { stream } = filters;
  const alsoKeep: Keep | undefined =
    matchesSubject === undefined && stream === undefined
      ? undefined
      : (item) =>
          (matchesSubject === undefined || matchesSubject(item.subject)) &&
          (stream === undefined || streamOf(item) === stream);
  const cache = new Map<string, MessageItem>();
  const range = {
    ...(createdFrom === undefined ? {} : { createdFrom: createdFrom.toISOString() }),
    ...(createdTo === undefined ? {} : { createdTo: createdTo.toISOString() }),
  };
  const streams =
    search === undefined
      ? statusStreams(
          account,
          statuses.includes(allStatuses) ? messageStatuses : statuses,
          range,
          cache,
          alsoKeep,
        )
      : searchStreams(
          account,
          search,
          statuses.includes(allStatuses) ? undefined : statuses,
          range,
          cache,
          alsoKeep,
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
