import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { processWholeBatch } from '#shared/platform/lambda/partial-batch.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';
import type { ItemImage, TableChange } from '#shared/platform/table/change.ts';
import { countChanges } from '#shared/stats/stream-counter.ts';

/** A tumbling window's batch: AWS sends the stream shard's id (the local stream poller does the same). */
export interface CountingEvent extends DynamoDBStreamEvent {
  shardId?: string;
  isFinalInvokeForWindow?: boolean;
}

/** A tumbling window's answer: Lambda wants `state` back (this consumer keeps none in it). */
export type CountingResponse = DynamoDBBatchResponse & { state: Record<string, string> };

/**
 * The table stream's counting consumer (event source mapping with a tumbling window, so each event
 * names its stream shard; locally the host's stream poller does the same): message changes → the
 * counter rows of the statistics. The batch is counted as one piece: on any failure all of it is
 * handed over again, from its first record (the rows already written skip what they have).
 */
export const handler = observedWorker(async (event: CountingEvent): Promise<CountingResponse> => {
  const records = event.Records ?? [];
  if (records.length === 0) return { batchItemFailures: [], state: {} };
  const shardId = event.shardId;
  if (shardId === undefined || shardId === '') {
    throw new Error('the counting consumer needs the stream shard id: map it with a tumbling window');
  }
  const { batchItemFailures } = await processWholeBatch(
    records,
    (batch) => countChanges(batch.map(changeOf), shardId),
    {
      idOf: (record) => record.dynamodb?.SequenceNumber ?? '',
      failureLog: {
        level: 'warn',
        message: 'counting a stream batch failed; the stream will retry it',
        fields: (first) => ({ sequence_number: first.dynamodb?.SequenceNumber, records: records.length }),
      },
    },
  );
  return { batchItemFailures, state: {} };
});

function changeOf(record: DynamoDBRecord): TableChange {
  return {
    kind: record.eventName,
    sequenceNumber: record.dynamodb?.SequenceNumber,
    before: record.dynamodb?.OldImage as ItemImage | undefined,
    after: record.dynamodb?.NewImage as ItemImage | undefined,
  };
}
