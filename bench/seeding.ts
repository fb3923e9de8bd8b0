import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mapLimit } from '../shared/platform/concurrency/map-limit.ts';
import { progress } from './stats.ts';

/**
 * Seeding (the data a section measures against, not the measurement) on a loaded machine: a few
 * writes at a time, each retried with backoff when the store is slow, so a benchmark measures instead
 * of crashing. The service's own clients keep their timeouts and retries (docs/reliability.md);
 * only seeding gets these.
 */
export const seedingConcurrency = 8;
const seedingAttempts = 8;

/** The bench's own client for seeding: the SDK's adaptive retries, more attempts, generous timeouts. */
export const seedingDynamo = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    maxAttempts: seedingAttempts,
    retryMode: 'adaptive',
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 30_000 },
  }),
  { marshallOptions: { removeUndefinedValues: true } },
);

/** Runs `work` once per item, at most `seedingConcurrency` at a time, retrying a failed item. */
export async function seedEach<T, R>(
  items: readonly T[],
  work: (item: T, index: number) => Promise<R>,
  label: string,
): Promise<R[]> {
  return mapLimit(items, seedingConcurrency, (item, index) => withRetries(() => work(item, index), label));
}

export async function withRetries<R>(work: () => Promise<R>, label: string): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= seedingAttempts) throw error;
      const name = error instanceof Error ? error.name : String(error);
      progress(`  ${label}: attempt ${attempt} failed (${name}), retrying`);
      await new Promise((done) => setTimeout(done, Math.min(5_000, 100 * 2 ** attempt)));
    }
  }
}
