import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import * as table from './gateway.ts';

export const batchWriteSize = 25;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * BatchWriteItem for any number of puts and deletes on the table: 25 a request (DynamoDB's limit),
 * `parallel` requests at a time, the items DynamoDB left unprocessed sent again with backoff. Not
 * atomic and unconditional: callers use it for items nothing else writes at the same time (new
 * messages and their parts, bulk imports). A failure after the SDK's retries is the catalogue's.
 */
export async function writeInBatches(requests: readonly table.WriteRequest[], parallel = 8): Promise<void> {
  const chunks: table.WriteRequest[][] = [];
  for (let start = 0; start < requests.length; start += batchWriteSize)
    chunks.push(requests.slice(start, start + batchWriteSize));
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) {
      let pending = chunks[next++] as table.WriteRequest[];
      for (let attempt = 0; pending.length > 0; attempt++) {
        pending = (await table.batchWrite(pending)).unprocessed;
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
