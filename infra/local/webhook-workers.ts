import { join } from 'node:path';
import { webhookQueueDefinition } from '../resources/definitions.ts';
import { type EventSource, startEventSource } from './event-source.ts';
import { type StreamSource, startStreamSource } from './stream-source.ts';
import type { LocalWorker } from './workers.ts';

/**
 * The webhook pipeline's stand-ins for AWS event sources (docs/webhooks.md, "Local host"): the
 * table stream → webhook-fanout poller (what the Lambda event source mapping does on AWS), and
 * the webhook queue → webhook-delivery mapping.
 */
const report = (what: string) => (error: unknown) => {
  if ((error as { name?: string }).name === 'AbortError') return;
  process.stderr.write(`${what}: ${error instanceof Error ? error.message : String(error)}\n`);
};

export const tableStreamWorker = (): LocalWorker => {
  let source: StreamSource | undefined;
  return {
    name: 'table stream → webhook-fanout',
    async start({ env, dataDir }) {
      source = startStreamSource({
        streamArn: env.TABLE_STREAM_ARN as string,
        functionId: 'webhook-fanout',
        checkpointFile: join(dataDir, 'stream-checkpoints.json'),
        onError: report('webhook-fanout stream source'),
      });
    },
    async stop() {
      await source?.stop();
    },
  };
};

export const webhookQueueWorker = (): LocalWorker => {
  let source: EventSource | undefined;
  return {
    name: 'webhook queue → webhook-delivery',
    async start({ env }) {
      source = startEventSource({
        queueUrl: env.WEBHOOK_QUEUE_URL as string,
        functionId: 'webhook-delivery',
        // Four at once, one of them kept for accounts with nothing running (fair-dispatch.ts), like
        // the stack's capped concurrency of the delivery function.
        pollers: webhookQueueDefinition.localConcurrency,
        waitTimeSeconds: 1,
        timeoutMs: webhookQueueDefinition.deliveryTimeoutSeconds * 1000,
        onError: report('webhook-delivery event source'),
      });
    },
    async stop() {
      await source?.stop();
    },
  };
};
