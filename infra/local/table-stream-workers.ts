import { join } from 'node:path';
import { countingStreamDefinition } from '../resources/definitions.ts';
import { type StreamSource, startStreamSource } from './stream-source.ts';
import type { LocalWorker } from './workers.ts';

/**
 * The table stream's consumers (docs/webhooks.md, "Local host"; docs/stats.md): the table stream →
 * webhook-fanout and → stats-counter pollers, what the Lambda event source mappings do on AWS.
 */
const report = (what: string) => (error: unknown) => {
  if ((error as { name?: string }).name === 'AbortError') return;
  process.stderr.write(`${what}: ${error instanceof Error ? error.message : String(error)}\n`);
};

/** A poller of the table stream for one consumer, with its own checkpoints in DATA_DIR. */
function tableStreamConsumer(
  functionId: string,
  checkpoints: string,
  options: Omit<Parameters<typeof startStreamSource>[0], 'streamArn' | 'functionId' | 'checkpointFile'> = {},
): LocalWorker {
  let source: StreamSource | undefined;
  return {
    name: `table stream → ${functionId}`,
    async start({ env, dataDir }) {
      source = startStreamSource({
        streamArn: env.TABLE_STREAM_ARN as string,
        functionId,
        checkpointFile: join(dataDir, checkpoints),
        onError: report(`${functionId} stream source`),
        ...options,
      });
    },
    async stop() {
      await source?.stop();
    },
  };
}

export const tableStreamWorker = (): LocalWorker =>
  tableStreamConsumer('webhook-fanout', 'stream-checkpoints.json');

/**
 * The table stream → stats-counter poller (docs/stats.md): a second reader of the same stream, its
 * batches gathered over the mapping's batching window and carrying the shard id, as a
 * tumbling-window mapping's do on AWS.
 */
export const countingStreamWorker = (): LocalWorker =>
  tableStreamConsumer('stats-counter', 'stats-stream-checkpoints.json', {
    batchSize: countingStreamDefinition.batchSize,
    batchingWindowMs: countingStreamDefinition.maxBatchingWindowSeconds * 1000,
    tumblingWindowSeconds: countingStreamDefinition.tumblingWindowSeconds,
    timeoutMs: countingStreamDefinition.timeoutSeconds * 1000,
  });
