import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { startStreamSource } from '../../infra/local/stream-source.ts';
import { useHostEnvironment } from '../support/host.ts';

/**
 * The local host's stream poller (what the Lambda event source mapping does on AWS) against DynamoDB
 * Local's stream, on a table of this file's own: batch item failures resume at the failed record,
 * a thrown error retries the batch, and the checkpoint file lets a restarted poller resume.
 */
useHostEnvironment();
const dynamo = new DynamoDBClient({});
const workDir = mkdtempSync(join(tmpdir(), 'stream-source-'));
let streamArn: string;
const tableName = `stream-test-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  const created = await dynamo.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  streamArn = created.TableDescription?.LatestStreamArn as string;
});
afterAll(() => {
  dynamo.destroy();
  rmSync(workDir, { recursive: true, force: true });
});

const put = (pk: string) =>
  dynamo.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: pk }, empty: { M: {} } } }));
const keyOf = (record: DynamoDBStreamEvent['Records'][number]) => record.dynamodb?.Keys?.pk?.S as string;

async function until(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  await vi.waitFor(() => assert.ok(condition(), 'condition not met in time'), {
    timeout: timeoutMs,
    interval: 100,
  });
}

describe('local table-stream poller', () => {
  it('resumes at a failed record, retries a thrown batch, and a restart continues from the checkpoint', async () => {
    const checkpointFile = join(workDir, 'checkpoints.json');
    const seen: string[] = [];
    let failedOnce = false;
    let thrownOnce = false;
    const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
      const keys = event.Records.map(keyOf);
      if (!thrownOnce && keys.includes('e')) {
        thrownOnce = true;
        throw new Error('simulated crash');
      }
      for (const record of event.Records) {
        // Lambda's shape: images in DynamoDB JSON, an empty map as {"M": {}}.
        assert.deepEqual(record.dynamodb?.NewImage?.empty, { M: {} });
        if (!failedOnce && keyOf(record) === 'c') {
          failedOnce = true;
          return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber as string }] };
        }
        seen.push(keyOf(record));
      }
      return { batchItemFailures: [] };
    };
    const source = startStreamSource({ streamArn, handler, checkpointFile, idleMs: 50 });
    try {
      for (const key of ['a', 'b', 'c', 'd']) await put(key);
      await until(() => seen.includes('d'));
      await put('e');
      await until(() => seen.includes('e'));
    } finally {
      await source.stop();
    }
    // Each record handled once it succeeded, in order; "c" was handed over again after its failure.
    assert.deepEqual(
      seen.filter((key, index) => seen.indexOf(key) === index),
      ['a', 'b', 'c', 'd', 'e'],
    );
    assert.equal(seen.filter((key) => key === 'a').length, 1, 'a record before the failure is not redone');
    assert.ok(failedOnce && thrownOnce);

    // A restarted poller resumes after the checkpoint: only the new record arrives.
    const after: string[] = [];
    const restarted = startStreamSource({
      streamArn,
      checkpointFile,
      idleMs: 50,
      handler: async (event) => {
        after.push(...event.Records.map(keyOf));
        return { batchItemFailures: [] };
      },
    });
    try {
      await put('f');
      await until(() => after.includes('f'));
    } finally {
      await restarted.stop();
    }
    assert.deepEqual(after, ['f']);
  });

  it('with a batching window and a tumbling window: records written within the window come in one batch, with the shard id', async () => {
    const batches: Array<{ keys: string[]; shardId?: string; state?: unknown }> = [];
    const source = startStreamSource({
      streamArn,
      idleMs: 50,
      batchingWindowMs: 1_500,
      tumblingWindowSeconds: 900,
      // A fresh checkpoint file: this poller starts at the stream's beginning.
      checkpointFile: join(workDir, 'windowed.json'),
      handler: async (event) => {
        const windowed = event as DynamoDBStreamEvent & { shardId?: string; state?: unknown };
        batches.push({ keys: event.Records.map(keyOf), shardId: windowed.shardId, state: windowed.state });
        return { batchItemFailures: [] };
      },
    });
    try {
      await until(() => batches.some((batch) => batch.keys.includes('f')));
      for (const key of ['w1', 'w2', 'w3']) await put(key);
      await until(() => batches.some((batch) => batch.keys.includes('w3')));
    } finally {
      await source.stop();
    }
    const last = batches.at(-1);
    assert.deepEqual(last?.keys, ['w1', 'w2', 'w3'], JSON.stringify(batches));
    assert.match(last?.shardId ?? '', /^shardId-/);
    assert.deepEqual(last?.state, {});
  });
});
