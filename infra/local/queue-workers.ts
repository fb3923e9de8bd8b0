import { inboundQueueDefinition, queueDefinition, webhookQueueDefinition } from '../resources/definitions.ts';
import { type EventSource, startEventSource } from './event-source.ts';
import type { LocalWorker } from './workers.ts';

/**
 * The queues' stand-ins for Lambda's SQS event source mappings: send queue → sender, dead-letter
 * queue → dead-letter, inbound queue → inbound, webhook queue → webhook-delivery. The dispatcher's
 * schedule is in scheduled-routes.ts; the table stream's consumers in table-stream-workers.ts.
 */
const report = (what: string) => (error: unknown) => {
  if ((error as { name?: string }).name === 'AbortError') return;
  process.stderr.write(`${what}: ${error instanceof Error ? error.message : String(error)}\n`);
};

interface QueueMapping {
  name: string;
  /** The variable that holds the queue's URL. */
  queueVariable: 'QUEUE_URL' | 'DEAD_LETTER_QUEUE_URL' | 'INBOUND_QUEUE_URL';
  functionId: string;
  pollers?: number;
  batchSize?: number;
  timeoutMs?: number;
}

/** Like a Lambda event source mapping: long-polls one queue and feeds batches to one function. */
function queueWorker({
  name,
  queueVariable,
  functionId,
  pollers,
  batchSize,
  timeoutMs,
}: QueueMapping): LocalWorker {
  let source: EventSource | undefined;
  return {
    name,
    async start({ env }) {
      source = startEventSource({
        queueUrl: env[queueVariable] as string,
        functionId,
        pollers,
        batchSize,
        timeoutMs,
        onError: report(`${functionId} event source`),
      });
    },
    async stop() {
      await source?.stop();
    },
  };
}

export const sendQueueWorker = (): LocalWorker =>
  queueWorker({
    name: 'send-queue → sender',
    queueVariable: 'QUEUE_URL',
    functionId: 'sender',
    // One of the three is kept for accounts with nothing running (fair-dispatch.ts): an account
    // alone still gets two at once.
    pollers: queueDefinition.localConcurrency,
  });

export const deadLetterWorker = (): LocalWorker =>
  queueWorker({
    name: 'dead-letter-queue → dead-letter',
    queueVariable: 'DEAD_LETTER_QUEUE_URL',
    functionId: 'dead-letter',
  });

/** The inbound queue → inbound mapping (SES receipts of stored mail; docs/inbound.md). */
export const inboundQueueWorker = (): LocalWorker =>
  queueWorker({
    name: 'inbound-queue → inbound',
    queueVariable: 'INBOUND_QUEUE_URL',
    functionId: 'inbound',
    batchSize: inboundQueueDefinition.batchSize,
    timeoutMs: inboundQueueDefinition.functionTimeoutSeconds * 1000,
  });

/** The webhook queue → webhook-delivery mapping (docs/webhooks.md, "Local host"). */
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
