import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/dynamo.ts';
import { guarded } from '../aws/faults.ts';
import { tableName } from '../config/storage.ts';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Items of the table by key, consistently: BatchGetItem in chunks of 100 (its limit), asking again
 * for what DynamoDB left unprocessed (with backoff). Missing items are simply absent from the result.
 * If DynamoDB keeps leaving keys unprocessed, the store is overloaded: code 4 (503), never a 500.
 */
export async function batchGetItems(
  itemKeys: readonly { pk: string; sk: string }[],
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (let start = 0; start < itemKeys.length; start += 100) {
    let request: Record<string, { Keys: Record<string, string>[]; ConsistentRead: boolean }> | undefined = {
      [tableName()]: { Keys: itemKeys.slice(start, start + 100), ConsistentRead: true },
    };
    for (let attempt = 0; request !== undefined && Object.keys(request).length > 0; attempt++) {
      const batch: Record<string, { Keys: Record<string, string>[]; ConsistentRead: boolean }> = request;
      const result = await guarded('database', () =>
        dynamo().send(new BatchGetCommand({ RequestItems: batch })),
      );
      found.push(...(result.Responses?.[tableName()] ?? []));
      request = result.UnprocessedKeys as typeof request;
      if (request === undefined || Object.keys(request).length === 0) break;
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
