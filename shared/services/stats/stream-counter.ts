import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import {
  bucketOf,
  countedEvents,
  counterAttribute,
  counterOfAttribute,
  dimensionsOf,
  sequenceKey,
} from '../../domain/stats/counters.ts';
import { describeError, log } from '../../observability/log.ts';
import type { DomainCounted } from '../../observability/metric-names.ts';
import { countForDomain } from '../../observability/metrics.ts';
import { messageLabelsOf, messageSnapshotOf } from '../../repositories/message-stream.ts';
import { applyRowIncrement, type Contribution, type RowIncrement } from '../../repositories/stats.ts';

/**
 * The table stream's counting consumer (docs/stats.md): every committed change of a message item
 * adds its counts (`countedEvents`) to the counter rows of its account, sending domain and tags,
 * in the hour of the server's time zone it happened in. A batch writes each row it touches once,
 * so the writes follow the batches, not the messages.
 *
 * Exactness: each row remembers the last record of its stream shard it counted (`seq`), and only
 * that shard's consumer writes it; the shard id comes with the event because the mapping uses a
 * tumbling window (AWS sends `shardId` then; the local stream poller does the same). On any failure
 * the whole batch is reported failed and done again: the rows already written skip what they have.
 */
export interface CountingEvent extends DynamoDBStreamEvent {
  shardId?: string;
  isFinalInvokeForWindow?: boolean;
}

/** A tumbling window's answer: Lambda wants `state` back (this consumer keeps none in it). */
export type CountingResponse = DynamoDBBatchResponse & { state: Record<string, string> };

type Image = Record<string, AttributeValue>;

export async function countStreamBatch(event: CountingEvent): Promise<CountingResponse> {
  const records = event.Records ?? [];
  if (records.length === 0) return { batchItemFailures: [], state: {} };
  if (event.shardId === undefined || event.shardId === '') {
    throw new Error('the counting consumer needs the stream shard id: map it with a tumbling window');
  }
  const rows = [...rowsOf(records, event.shardId).values()];
  try {
    const applied = await Promise.all(rows.map(applyRowIncrement));
    publishDomainFigures(rows, applied);
    return { batchItemFailures: [], state: {} };
  } catch (error) {
    const first = records[0] as DynamoDBRecord;
    log('warn', 'counting a stream batch failed; the stream will retry it', {
      sequence_number: first.dynamodb?.SequenceNumber,
      records: records.length,
      ...describeError(error),
    });
    return { batchItemFailures: [{ itemIdentifier: first.dynamodb?.SequenceNumber ?? '' }], state: {} };
  }
}

const domainCounted = new Set<string>(['sent', 'delivered', 'bounced', 'complained']);

/** Per-domain figures for the dashboard, from what was added this time only. */
function publishDomainFigures(rows: readonly RowIncrement[], applied: readonly Contribution[][]): void {
  rows.forEach((row, index) => {
    if (row.kind !== 'domain') return;
    const counts: Partial<Record<DomainCounted, number>> = {};
    for (const contribution of applied[index] ?? []) {
      const counter = counterOfAttribute(contribution.attribute);
      if (counter === undefined || !domainCounted.has(counter)) continue;
      counts[counter as DomainCounted] = (counts[counter as DomainCounted] ?? 0) + contribution.n;
    }
    countForDomain(row.value, counts);
  });
}

/** The batch's counts, grouped by the row each goes to (account, dimension, day, stream shard). */
function rowsOf(records: readonly DynamoDBRecord[], streamShard: string): Map<string, RowIncrement> {
  const rows = new Map<string, RowIncrement>();
  for (const record of records) {
    if (record.eventName === 'REMOVE') continue;
    const newImage = record.dynamodb?.NewImage as Image | undefined;
    const after = messageSnapshotOf(newImage);
    const labels = messageLabelsOf(newImage);
    const sequence = record.dynamodb?.SequenceNumber;
    if (after === undefined || labels === undefined || sequence === undefined) continue;
    const before = messageSnapshotOf(record.dynamodb?.OldImage as Image | undefined);
    for (const counted of countedEvents(before, after, labels)) {
      const { date, hour } = bucketOf(counted.at);
      const contribution: Contribution = {
        sequence: sequenceKey(sequence),
        attribute: counterAttribute(counted.counter, hour),
        n: 1,
      };
      for (const dimension of dimensionsOf(labels)) {
        const id = `${labels.accountId}\u0000${dimension.kind}\u0000${dimension.value}\u0000${date}`;
        let row = rows.get(id);
        if (row === undefined) {
          row = {
            account: labels.accountId,
            kind: dimension.kind,
            value: dimension.value,
            date,
            streamShard,
            contributions: [],
          };
          rows.set(id, row);
        }
        row.contributions.push(contribution);
      }
    }
  }
  return rows;
}
