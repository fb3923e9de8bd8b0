/**
 * Runs `work` over `items` with at most `limit` at a time and returns the results in the items'
 * order: the one bounded-concurrency loop of the service (batch checks and writes, deletes, the
 * parts of a message) and of its tests. Pure: no I/O of its own.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index] as T, index);
      }
    }),
  );
  return results;
}
