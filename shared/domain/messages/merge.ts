import type { Positions } from './cursor.ts';

/** One index stream's page, newest first, as DynamoDB returned it. */
export interface StreamPage<T> {
  stream: string;
  items: T[];
  /** DynamoDB returned a LastEvaluatedKey: the stream may hold more. */
  more: boolean;
}

/**
 * Merges the pages of several streams (one per status) into one page, newest first, and works
 * out where each stream continues. A stream whose items were all taken and that had no more is
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
