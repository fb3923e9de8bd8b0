import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { processPartialBatch } from '#shared/platform/lambda/partial-batch.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';
import type { ItemImage, TableChange } from '#shared/platform/table/change.ts';
import { batchFanOut } from '#shared/webhooks/fanout.ts';

/**
 * The table stream's consumer (event source mapping with ReportBatchItemFailures; locally the
 * host's stream poller): message changes → webhook events → one queue job per endpoint. Every
 * record of a batch is fanned out at once; the stream resumes from the first one that failed (its
 * later records are done again, harmlessly), so only that one is answered.
 */
export const handler = observedWorker(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const fanOut = batchFanOut();
  return processPartialBatch(event.Records, (record) => fanOut(changeOf(record)), {
    idOf: (record) => record.dynamodb?.SequenceNumber ?? '',
    report: 'first',
    failureLog: {
      level: 'warn',
      message: 'webhook fan-out failed; the stream will retry',
      fields: (record) => ({ sequence_number: record.dynamodb?.SequenceNumber }),
    },
  });
});

function changeOf(record: DynamoDBRecord): TableChange {
  return {
    kind: record.eventName,
    sequenceNumber: record.dynamodb?.SequenceNumber,
    before: record.dynamodb?.OldImage as ItemImage | undefined,
    after: record.dynamodb?.NewImage as ItemImage | undefined,
  };
}
