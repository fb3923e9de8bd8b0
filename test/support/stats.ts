import assert from 'node:assert/strict';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { vi } from 'vitest';
import { toLambdaRecord } from '../../infra/local/stream-source.ts';
import { call, hostInfo } from './host.ts';

/** POST /stats/query-1.0 for an account; fails the test on anything but 200. */
export async function statsOf(token: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await call('POST', '/stats/query-1.0', { token, body });
  assert.equal(response.status, 200, response.text);
  return response.body.data;
}

/** Polls the stats until `expected` holds (the counting consumer lags the table by a batch). */
export async function waitForTotals(
  token: string,
  body: Record<string, unknown>,
  expected: Record<string, number>,
  timeoutMs = 100_000,
): Promise<Record<string, any>> {
  return vi.waitFor(
    async () => {
      const last = await statsOf(token, body);
      if (!Object.entries(expected).every(([name, value]) => last.totals[name] === value))
        assert.fail(`stats did not reach ${JSON.stringify(expected)}; last ${JSON.stringify(last.totals)}`);
      return last;
    },
    { timeout: timeoutMs, interval: 500 },
  );
}

/**
 * Every record of the host's table stream whose key is one of `uuids`' message items, by shard, as
 * Lambda would deliver them: what a test hands the counting consumer to make it do batches again.
 */
export function streamRecordsOf(uuids: readonly string[]): Promise<Map<string, DynamoDBRecord[]>> {
  const wanted = new Set(uuids.map((uuid) => `MESSAGE#${uuid}`));
  return streamRecordsWhere(
    (record) => wanted.has(record.dynamodb?.Keys?.pk?.S ?? '') && record.dynamodb?.Keys?.sk?.S === 'MESSAGE',
  );
}

/** Every record of the host's table stream that `wanted` keeps, by shard, as Lambda would deliver them. */
export async function streamRecordsWhere(
  wanted: (record: _Record) => boolean,
): Promise<Map<string, DynamoDBRecord[]>> {
  const env = hostInfo().env;
  const streamArn = env.TABLE_STREAM_ARN as string;
  const client = new DynamoDBStreamsClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB });
  const byShard = new Map<string, DynamoDBRecord[]>();
  try {
    const described = await client.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of described.StreamDescription?.Shards ?? []) {
      const shardId = shard.ShardId as string;
      let iterator = (
        await client.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: shardId,
            ShardIteratorType: 'TRIM_HORIZON',
          }),
        )
      ).ShardIterator;
      const found: _Record[] = [];
      while (iterator !== undefined) {
        const page = await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
        const records = page.Records ?? [];
        found.push(...records.filter(wanted));
        // An open shard keeps answering: stop at the first empty page (its current end).
        iterator = records.length === 0 ? undefined : page.NextShardIterator;
      }
      if (found.length > 0)
        byShard.set(
          shardId,
          found.map((record) => toLambdaRecord(record, streamArn, env.AWS_REGION ?? 'us-east-1')),
        );
    }
  } finally {
    client.destroy();
  }
  return byShard;
}
