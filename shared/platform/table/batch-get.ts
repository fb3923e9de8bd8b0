import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import * as table from './gateway.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Items of the table by key, consistently: BatchGetItem in chunks of 100 (its limit), asking again
 * for what DynamoDB left unprocessed (with backoff). Missing items are simply absent from the result.
 * If DynamoDB keeps leaving keys unprocessed, the store is overloaded: code 4 (503), never a 500.
 */
export async function batchGetItems(itemKeys: readonly { pk: string; sk: string }[]): Promise<table.Item[]> {
  const found: table.Item[] = [];
  for (let start = 0; start < itemKeys.length; start += 100) {
    let pending: readonly table.Item[] = itemKeys.slice(start, start + 100);
    for (let attempt = 0; pending.length > 0; attempt++) {
      const result = await table.batchGet(pending, { consistent: true });
      found.push(...result.items);
      pending = result.unprocessed;
      if (pending.length === 0) break;
      if (attempt >= 8)
        throw new ServiceError(
          Code.DatabaseUnavailable,
          'The database kept part of the reads unanswered; retry',
        );
      await pause(25 * 2 ** attempt);
    }
  }
  return found;
}
