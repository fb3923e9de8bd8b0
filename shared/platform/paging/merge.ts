import type { Positions } from './cursor.ts';

/**
 * One index stream (a shard of an index partition) as the merge sees it: `fetch` returns the next
 * sort keys after `after` (exclusive), newest first. A stream that filters (a listing lane read for
 * some of its statuses keeps only those) may return fewer keys than it evaluated; `last` is then where it stopped.
 */
export interface KeyStream {
  id: string;
  fetch(
    after: string | undefined,
    limit: number,
  ): Promise<{ keys: string[]; last?: string; more: boolean; evaluated: number }>;
}

/**
 * Keys each stream reads in its first round: its fair share of the page. A stream that runs dry
 * before the page is full is read again for what is still missing, so the read-ahead stays small.
 */
export function chunkSize(limit: number, streams: number): number {
  return Math.max(1, Math.ceil(limit / Math.max(1, streams)));
}

/**
 * The work a page may do (docs/messages.md, "Work budget"): the index entries DynamoDB evaluates for
 * it. A page of streams that keep everything they read never needs more than
 * `limit + streams × chunkSize` (see `mergeStreams`); streams that filter (a lane read for some of
 * its statuses keeps only those; filters on tags, metadata or recipients) may read any number of entries
 * they then drop, so they get `extraWorkPerPage` entries more, and then the page ends where the
 * reading stopped, with a cursor.
 */
export const extraWorkPerPage = 1_000;

export function workBudget(limit: number, streams: number): number {
  return limit + Math.max(1, streams) * chunkSize(limit, streams) + extraWorkPerPage;
}

/** The largest read of one stream in one round, however much it dropped before. */
export const maxReadSize = 1_000;

/**
 * Exact k-way merge of newest-first streams into one page of `limit` keys. A stream is read again
 * only when its buffer is empty and it may hold more, so no key is taken while another stream could
 * still hold a newer one: the page is exactly what one index over everything would return. Work is
 * bounded by the page: streams that keep what they read evaluate at most
 * `limit + streams × chunkSize(limit, streams)` keys. A stream that filters and dropped all it read
 * is read again in doubling chunks (up to `maxReadSize`, and to its share of what is left of the
 * budget), so a long run of dropped entries costs few round trips.
 * Every stream continues after the page's last key: a message is on exactly one stream at a time
 * but may move to another between two pages (its status changed), and its sort key never changes,
 * so continuing every stream from the same boundary shows each message once, in order, wherever
 * it moved (a stream's own last key, or "exhausted", would show a moved message twice or never).
 * The streams are done only when all of them are. Within one page the streams are read at the
 * same time, so a message that changes status meanwhile can be read from both of its streams (it
 * is taken once) or, rarely, from neither: lists are eventually consistent (docs/messages.md).
 *
 * The work budget (`budget`, index entries evaluated; default `workBudget`): once a page has
 * evaluated that many and would have to read again, it stops reading. It still takes every buffered
 * key that no unread entry can precede (each stream's unread entries are older than its read
 * position). A short page's boundary is then the newest read position of the streams that may hold
 * more: every entry newer than it was evaluated (taken, or dropped by its filter), every entry older
 * is read next time, so the next page neither skips nor repeats a message, and each short page moves
 * the boundary further back. The page may hold fewer than `limit` messages (none, even) with a
 * cursor; `budgetReached` says so.
 */
export async function mergeStreams(
  streams: readonly KeyStream[],
  previous: Positions,
  limit: number,
  budget: number = workBudget(limit, streams.length),
): Promise<{
  taken: Array<{ key: string; stream: string }>;
  positions: Positions;
  evaluated: number;
  budgetReached: boolean;
}> {
  const chunk = chunkSize(limit, streams.length);
  const states = streams
    .filter((stream) => previous[stream.id]?.done !== true)
    .map((stream) => ({
      stream,
      buffer: [] as string[],
      readAfter: previous[stream.id]?.after,
      more: true,
      size: chunk,
    }));
  const taken: Array<{ key: string; stream: string }> = [];
  const take = (state: (typeof states)[number]) => {
    const key = state.buffer.shift() as string;
    // A message that moved while the streams were read can come back from two of them, under the
    // same sort key: it is shown once.
    if (taken[taken.length - 1]?.key !== key) taken.push({ key, stream: state.stream.id });
  };
  const newestHead = () => {
    let best: (typeof states)[number] | undefined;
    for (const state of states) {
      const head = state.buffer[0];
      if (head !== undefined && (best === undefined || head > (best.buffer[0] as string))) best = state;
    }
    return best;
  };
  let evaluated = 0;
  let rounds = 0;
  let budgetReached = false;
  while (taken.length < limit) {
    const empty = states.filter((state) => state.buffer.length === 0 && state.more);
    if (empty.length > 0 && rounds > 0 && evaluated >= budget) {
      budgetReached = true;
      break;
    }
    if (empty.length > 0) rounds += 1;
    const share = Math.floor(Math.max(0, budget - evaluated) / Math.max(1, empty.length));
    await Promise.all(
      empty.map(async (state) => {
        // A stream read as usual takes its share of what the page still needs; one that dropped all
        // it read before reads its grown size, within its share of the budget left.
        const size =
          state.size > chunk
            ? Math.max(1, Math.min(state.size, share))
            : Math.max(1, Math.min(chunk, limit - taken.length));
        const page = await state.stream.fetch(state.readAfter, size);
        evaluated += page.evaluated;
        state.buffer.push(...page.keys);
        state.more = page.more;
        // Dropped everything it read: read further next time.
        state.size = page.keys.length === 0 ? Math.min(maxReadSize, state.size * 2) : chunk;
        const last = page.last ?? page.keys[page.keys.length - 1];
        if (last !== undefined) state.readAfter = last;
        // A read that moved nowhere cannot be repeated usefully: treat the stream as ended.
        else state.more = false;
      }),
    );
    // A filtering stream may have read only keys it dropped: read it again before choosing.
    if (states.some((state) => state.buffer.length === 0 && state.more)) continue;
    const best = newestHead();
    if (best === undefined) break;
    take(best);
  }

  const positions: Positions = { ...previous };
  if (budgetReached) {
    // Unread entries of a stream are older than its read position: a buffered key newer than the
    // read position of every stream that still needs reading can still be taken, in order.
    const newestPosition = (list: typeof states) =>
      list.reduce<string>(
        (newest, state) => ((state.readAfter as string) > newest ? (state.readAfter as string) : newest),
        '',
      );
    const unreadUpTo = () =>
      newestPosition(states.filter((state) => state.buffer.length === 0 && state.more));
    for (let best = newestHead(); taken.length < limit && best !== undefined; best = newestHead()) {
      if ((best.buffer[0] as string) <= unreadUpTo()) break;
      take(best);
    }
    // A full page continues after its last key, as usual. A short one continues after the newest
    // read position of the streams that may hold more: every unread entry is older than it, every
    // key taken is at least as new, and every key left in a buffer is older.
    const boundary =
      taken.length === limit
        ? (taken[taken.length - 1]?.key as string)
        : newestPosition(states.filter((state) => state.more));
    for (const state of states) positions[state.stream.id] = { after: boundary, done: false };
    return { taken, positions, evaluated, budgetReached };
  }
  const exhausted = states.every((state) => state.buffer.length === 0 && !state.more);
  const boundary = taken[taken.length - 1]?.key;
  for (const state of states) {
    const id = state.stream.id;
    if (exhausted) positions[id] = { done: true };
    else if (boundary !== undefined) positions[id] = { after: boundary, done: false };
  }
  return { taken, positions, evaluated, budgetReached };
}

/** One index stream's page, newest first, as DynamoDB returned it. */
export interface StreamPage<T> {
  stream: string;
  items: T[];
  /** DynamoDB returned a LastEvaluatedKey: the stream may hold more. */
  more: boolean;
}

/**
 * Merges the pages of several streams, each read with the page's full limit (the suppression
 * list's per-reason streams), into one page, newest first, and works out where each stream continues. A stream whose items were all taken and that had no more is
 * done; otherwise it continues after the last item taken from it (or where it was).
 */
export function mergePages<T>(
  pages: StreamPage<T>[],
  previous: Positions,
  limit: number,
  sortKey: (item: T) => string,
): { items: T[]; positions: Positions } {
  const tagged = pages.flatMap((page) =>
    page.items.map((item) => ({ item, stream: page.stream, key: sortKey(item) })),
  );
  tagged.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
  const taken = tagged.slice(0, limit);
  const positions: Positions = { ...previous };
  for (const page of pages) {
    const fromStream = taken.filter((entry) => entry.stream === page.stream);
    const last = fromStream[fromStream.length - 1];
    if (fromStream.length === page.items.length && !page.more) positions[page.stream] = { done: true };
    else if (last !== undefined) positions[page.stream] = { after: last.key, done: false };
  }
  return { items: taken.map((entry) => entry.item), positions };
}
