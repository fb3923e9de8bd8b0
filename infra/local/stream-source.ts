import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { loadFunction } from './function-code.ts';
import { timedInvocation } from './invocations.ts';
import { lambdaContext } from './lambda-context.ts';

/**
 * What Lambda's DynamoDB Streams event source mapping (or EventBridge Pipes) does, for the local
 * host: read every shard of the table's stream in order (DescribeStream, GetShardIterator,
 * GetRecords against DynamoDB Local), hand the function real stream event batches, and move the
 * checkpoint past a batch only when the function succeeded. With `batchItemFailures` the next read
 * starts at the first failed record; a thrown error retries the whole batch, with a growing pause.
 * Unlike AWS (retry attempts, then an on-failure destination) it retries for as long as it takes:
 * locally there is no one to read a failure queue, and stopping would lose events.
 * Checkpoints are kept in a file, so a restarted host resumes where it stopped.
 */
type Handler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

export interface StreamSourceOptions {
  streamArn: string;
  /** functions/<id>/handler.ts, or a handler function (tests). */
  functionId?: string;
  handler?: Handler;
  batchSize?: number;
  /** Pause between reads of an idle stream (Lambda polls about 4 times a second). */
  idleMs?: number;
  /** MaximumBatchingWindowInSeconds, in ms: how long a batch gathers records once one has come. */
  batchingWindowMs?: number;
  timeoutMs?: number;
  /** File that keeps the checkpoint of each shard. */
  checkpointFile?: string;
  region?: string;
  /**
   * Events as Lambda sends them to a mapping with a tumbling window: with `shardId`, `window` and
   * `state` (the counting consumer needs the shard id; docs/stats.md).
   */
  tumblingWindowSeconds?: number;
  onError?: (error: unknown) => void;
}

export interface StreamSource {
  stop(): Promise<void>;
}

interface ShardState {
  shardId: string;
  parentShardId?: string;
  iterator?: string;
  done: boolean;
  failures: number;
}

export function startStreamSource(options: StreamSourceOptions): StreamSource {
  const client = new DynamoDBStreamsClient({
    // DynamoDB Local serves its streams on the table endpoint.
    ...(process.env.AWS_ENDPOINT_URL_DYNAMODB === undefined
      ? {}
      : { endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB }),
  });
  const abort = new AbortController();
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const idleMs = options.idleMs ?? 250;
  const checkpoints = readCheckpoints(options.checkpointFile, options.streamArn);
  const shards = new Map<string, ShardState>();
  let running = true;
  let handler: Promise<Handler> | undefined;
  const getHandler = () => {
    handler ??= options.handler
      ? Promise.resolve(options.handler)
      : loadFunction<Handler>(options.functionId as string);
    return handler;
  };

  const refreshShards = async (): Promise<void> => {
    let start: string | undefined;
    do {
      const described = await client.send(
        new DescribeStreamCommand({ StreamArn: options.streamArn, ExclusiveStartShardId: start }),
        { abortSignal: abort.signal },
      );
      const list: Shard[] = described.StreamDescription?.Shards ?? [];
      for (const shard of list) {
        if (shard.ShardId === undefined || shards.has(shard.ShardId)) continue;
        shards.set(shard.ShardId, {
          shardId: shard.ShardId,
          ...(shard.ParentShardId === undefined ? {} : { parentShardId: shard.ParentShardId }),
          done: false,
          failures: 0,
        });
      }
      start = described.StreamDescription?.LastEvaluatedShardId;
    } while (start !== undefined);
  };

  const iteratorFor = async (shard: ShardState, at?: string): Promise<string | undefined> => {
    const checkpoint = checkpoints[shard.shardId];
    const result = await client.send(
      new GetShardIteratorCommand({
        StreamArn: options.streamArn,
        ShardId: shard.shardId,
        ...(at !== undefined
          ? { ShardIteratorType: 'AT_SEQUENCE_NUMBER', SequenceNumber: at }
          : checkpoint !== undefined
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: checkpoint }
            : { ShardIteratorType: 'TRIM_HORIZON' }),
      }),
      { abortSignal: abort.signal },
    );
    return result.ShardIterator;
  };

  /** Reads and hands over one batch of a shard; true when it had records. */
  const pollShard = async (shard: ShardState): Promise<boolean> => {
    shard.iterator ??= await iteratorFor(shard);
    if (shard.iterator === undefined) {
      shard.done = true;
      return false;
    }
    const batchSize = options.batchSize ?? 100;
    const read = (iterator: string, limit: number) =>
      client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: limit }), {
        abortSignal: abort.signal,
      });
    let page = await read(shard.iterator, batchSize);
    const records = page.Records ?? [];
    if (records.length === 0) {
      if (page.NextShardIterator === undefined) shard.done = true;
      else shard.iterator = page.NextShardIterator;
      return false;
    }
    // Like MaximumBatchingWindowInSeconds: once a record is there, gather more for up to the
    // window, until the batch is full or the shard closes.
    const gatherUntil = Date.now() + (options.batchingWindowMs ?? 0);
    while (records.length < batchSize && page.NextShardIterator !== undefined && Date.now() < gatherUntil) {
      await pause(Math.min(idleMs, gatherUntil - Date.now()));
      if (!running) break;
      const next: string = page.NextShardIterator;
      page = await read(next, batchSize - records.length);
      records.push(...(page.Records ?? []));
      if (page.NextShardIterator === undefined) break;
    }
    const failedAt = await invoke(records, shard.shardId);
    if (failedAt === undefined) {
      shard.failures = 0;
      const last = records.at(-1)?.dynamodb?.SequenceNumber;
      if (last !== undefined) saveCheckpoint(shard.shardId, last);
      if (page.NextShardIterator === undefined) shard.done = true;
      else shard.iterator = page.NextShardIterator;
      return true;
    }
    // Everything before the failed record is done; the next read starts at the failed record.
    const index = records.findIndex((record) => record.dynamodb?.SequenceNumber === failedAt);
    const before = index > 0 ? records[index - 1]?.dynamodb?.SequenceNumber : undefined;
    if (before !== undefined) saveCheckpoint(shard.shardId, before);
    shard.failures += 1;
    shard.iterator = await iteratorFor(shard, failedAt);
    await pause(Math.min(10_000, 250 * 2 ** Math.min(shard.failures, 6)));
    return true;
  };

  /** Undefined when the batch succeeded, else the sequence number to resume at. */
  const invoke = async (records: _Record[], shardId: string): Promise<string | undefined> => {
    const event: DynamoDBStreamEvent = {
      Records: records.map((record) => toLambdaRecord(record, options.streamArn, region)),
      ...(options.tumblingWindowSeconds === undefined
        ? {}
        : windowOf(shardId, options.tumblingWindowSeconds)),
    };
    const first = records[0]?.dynamodb?.SequenceNumber as string;
    try {
      const fn = await getHandler();
      const requestId = crypto.randomUUID();
      const functionId = options.functionId ?? 'stream-consumer';
      const response = await timedInvocation(functionId, () =>
        withTimeout(
          (
            fn as unknown as (
              e: DynamoDBStreamEvent,
              c: unknown,
            ) => Promise<DynamoDBBatchResponse | undefined>
          )(event, lambdaContext(functionId, requestId, options.timeoutMs ?? 60_000)),
          options.timeoutMs ?? 60_000,
        ),
      );
      const failures = response?.batchItemFailures ?? [];
      if (failures.length === 0) return undefined;
      // Like Lambda: resume at the lowest reported sequence number of this batch.
      const sequence = new Set(records.map((record) => record.dynamodb?.SequenceNumber));
      const reported = failures.map((failure) => failure.itemIdentifier).filter((id) => sequence.has(id));
      if (reported.length === 0) return first;
      return records.find((record) => reported.includes(record.dynamodb?.SequenceNumber as string))?.dynamodb
        ?.SequenceNumber;
    } catch (error) {
      options.onError?.(error);
      return first;
    }
  };

  const saveCheckpoint = (shardId: string, sequenceNumber: string) => {
    checkpoints[shardId] = sequenceNumber;
    writeCheckpoints(options.checkpointFile, options.streamArn, checkpoints);
  };

  const loop = async (): Promise<void> => {
    let lastRefresh = 0;
    while (running) {
      try {
        if (Date.now() - lastRefresh > 5_000 || shards.size === 0) {
          await refreshShards();
          lastRefresh = Date.now();
        }
        let busy = false;
        const ready = [...shards.values()].filter(
          (shard) =>
            !shard.done &&
            (shard.parentShardId === undefined || shards.get(shard.parentShardId)?.done !== false),
        );
        // Shards are independent (as Lambda reads them in parallel); records within one stay in order.
        const results = await Promise.all(ready.map((shard) => pollShard(shard)));
        busy = results.some(Boolean);
        if (!busy) await pause(idleMs);
      } catch (error) {
        if (!running) return;
        options.onError?.(error);
        // An expired iterator (15 min) or a restarted emulator: start over from the checkpoints.
        for (const shard of shards.values()) delete shard.iterator;
        await pause(1_000);
      }
    }
  };

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      abort.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });

  const running$ = loop();
  return {
    async stop() {
      running = false;
      abort.abort();
      await running$.catch(() => undefined);
      client.destroy();
    },
  };
}

/**
 * What Lambda adds to the event of a mapping with a tumbling window: the shard, the current window
 * (aligned on its length, as Lambda's are) and an empty state (no state is carried here: the
 * consumers of this host keep theirs in the table).
 */
function windowOf(shardId: string, seconds: number) {
  const start = Math.floor(Date.now() / (seconds * 1000)) * seconds * 1000;
  return {
    shardId,
    window: { start: new Date(start).toISOString(), end: new Date(start + seconds * 1000).toISOString() },
    state: {},
    isFinalInvokeForWindow: false,
    isWindowTerminatedEarly: false,
  };
}

/** A GetRecords record as Lambda delivers it (ApproximateCreationDateTime in epoch seconds). */
export function toLambdaRecord(record: _Record, streamArn: string, region: string): DynamoDBRecord {
  const data = record.dynamodb ?? {};
  const created = data.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName as DynamoDBRecord['eventName'],
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(created === undefined
        ? {}
        : { ApproximateCreationDateTime: Math.floor(new Date(created).getTime() / 1000) }),
      Keys: data.Keys as never,
      ...(data.NewImage === undefined ? {} : { NewImage: normaliseImage(data.NewImage) as never }),
      ...(data.OldImage === undefined ? {} : { OldImage: normaliseImage(data.OldImage) as never }),
      SequenceNumber: data.SequenceNumber,
      SizeBytes: data.SizeBytes,
      StreamViewType: data.StreamViewType as never,
    },
  };
}

/**
 * The streams client hands an empty map (`{"M": {}}`) over as `{}`; Lambda delivers `{"M": {}}`.
 * Restores it, at any depth, so the function sees what it sees on AWS.
 */
function normaliseImage(image: Record<string, unknown>): Record<string, unknown> {
  const value = (attribute: unknown): unknown => {
    if (attribute === null || typeof attribute !== 'object') return attribute;
    const entries = Object.entries(attribute as Record<string, unknown>).filter(
      ([, inner]) => inner !== undefined,
    );
    if (entries.length === 0) return { M: {} };
    const [[type, inner]] = entries as [[string, unknown]];
    if (type === 'M') return { M: normaliseImage(inner as Record<string, unknown>) };
    if (type === 'L') return { L: (inner as unknown[]).map(value) };
    return { [type]: inner };
  };
  return Object.fromEntries(Object.entries(image).map(([name, attribute]) => [name, value(attribute)]));
}

function readCheckpoints(file: string | undefined, streamArn: string): Record<string, string> {
  if (file === undefined || !existsSync(file)) return {};
  try {
    const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, string>>;
    return { ...(all[streamArn] ?? {}) };
  } catch {
    return {};
  }
}

function writeCheckpoints(
  file: string | undefined,
  streamArn: string,
  checkpoints: Record<string, string>,
): void {
  if (file === undefined) return;
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify({ [streamArn]: checkpoints }));
  renameSync(temporary, file);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`function timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
