import type { Positions } from './cursor.ts';

/**
 * One index stream (a shard of an index partition) as the merge sees it: `fetch` returns the next
 * sort keys after `after` (exclusive), newest first. A stream that filters (the in-flight one keeps
 * only the asked statuses) may return fewer keys than it evaluated; `last` is then where it stopped.
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
 * Exact k-way merge of newest-first streams into one page of `limit` keys. A stream is read again
 * only when its buffer is empty and it may hold more, so no key is taken while another stream could
 * still hold a newer one: the page is exactly what one index over everything would return. Work is
 * bounded by the page: at most `limit + streams × chunkSize(limit, streams)` keys are evaluated.
 * Every stream continues after the page's last key: a message is on exactly one stream at a time
 * but may move to another between two pages (its status changed), and its sort key never changes,
 * so continuing every stream from the same boundary shows each message once, in order, wherever
 * it moved (a stream's own last key, or "exhausted", would show a moved message twice or never).
 * The streams are done only when all of them are. Within one page the streams are read at the
 * same time, so a message that changes status meanwhile can be read from both of its streams (it
 * is taken once) or, rarely, from neither: lists are eventually consistent (docs/messages.md).
 */
export async function mergeStreams(
  streams: readonly KeyStream[],
  previous: Positions,
  limit: number,
): Promise<{ taken: Array<{ key: string; stream: string }>; positions: Positions; evaluated: number }> {
  const chunk = chunkSize(limit, streams.length);
  const states = streams
    .filter((stream) => previous[stream.id]?.done !== true)
    .map((stream) => ({
      stream,
      buffer: [] as string[],
      readAfter: previous[stream.id]?.after,
      more: true,
    }));
  const taken: Array<{ key: string; stream: string }> = [];
  let evaluated = 0;
  while (taken.length < limit) {
    const empty = states.filter((state) => state.buffer.length === 0 && state.more);
    await Promise.all(
      empty.map(async (state) => {
        const page = await state.stream.fetch(
          state.readAfter,
          Math.max(1, Math.min(chunk, limit - taken.length)),
        );
        evaluated += page.evaluated;
        state.buffer.push(...page.keys);
        state.more = page.more;
        const last = page.last ?? page.keys[page.keys.length - 1];
        if (last !== undefined) state.readAfter = last;
        // A read that moved nowhere cannot be repeated usefully: treat the stream as ended.
        else state.more = false;
      }),
    );
    // A filtering stream may have read only keys it dropped: read it again before choosing.
    if (states.some((state) => state.buffer.length === 0 && state.more)) continue;
    let best: (typeof states)[number] | undefined;
    for (const state of states) {
      const head = state.buffer[0];
      if (head !== undefined && (best === undefined || head > (best.buffer[0] as string))) best = state;
    }
    if (best === undefined) break;
    const key = best.buffer.shift() as string;
    // A message that moved while the streams were read can come back from two of them, under the
    // same sort key: it is shown once.
    if (taken[taken.length - 1]?.key === key) continue;
    taken.push({ key, stream: best.stream.id });
  }
  const exhausted = states.every((state) => state.buffer.length === 0 && !state.more);
  const boundary = taken[taken.length - 1]?.key;
  const positions: Positions = { ...previous };
  for (const state of states) {
    const id = state.stream.id;
    if (exhausted) positions[id] = { done: true };
    else if (boundary !== undefined) positions[id] = { after: boundary, done: false };
  }
  return { taken, positions, evaluated };
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
