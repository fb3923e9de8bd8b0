import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../config/storage.ts';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import { dynamo } from './dynamo.ts';
import { guarded } from './faults.ts';

/**
 * BatchWriteItem for any number of puts and deletes on the table: 25 a request (DynamoDB's limit),
 * `parallel` requests at a time, the items DynamoDB left unprocessed sent again with backoff. Not
 * atomic and unconditional: callers use it for items nothing else writes at the same time (new
 * messages and their parts, bulk imports). A failure after the SDK's retries is the catalogue's.
 */
export type WriteRequest =
  | { PutRequest: { Item: Record<string, unknown> } }
  | { DeleteRequest: { Key: Record<string, unknown> } };

export const batchWriteSize = 25;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function writeInBatches(requests: readonly WriteRequest[], parallel = 8): Promise<void> {
  const chunks: WriteRequest[][] = [];
  for (let start = 0; start < requests.length; start += batchWriteSize)
    chunks.push(requests.slice(start, start + batchWriteSize));
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) {
      let pending = chunks[next++] as WriteRequest[];
      for (let attempt = 0; pending.length > 0; attempt++) {
        const batch = pending;
        const result = await guarded('database', () =>
          dynamo().send(new BatchWriteCommand({ RequestItems: { [tableName()]: batch as never } })),
        );
        pending = (result.UnprocessedItems?.[tableName()] ?? []) as WriteRequest[];
        if (pending.length === 0) break;
        if (attempt >= 8)
          throw new ServiceError(
            Code.DatabaseUnavailable,
            'The database kept refusing part of the writes; retry',
          );
        await pause(25 * 2 ** attempt);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, chunks.length) }, worker));
}
