import { inboundQueueDefinition } from '../resources/definitions.ts';
import { type EventSource, startEventSource } from './event-source.ts';
import type { LocalWorker } from './workers.ts';

/**
 * The delivery pipeline's stand-ins for AWS event sources: the send queue → sender mapping and the
 * dead-letter queue → dead-letter mapping. The dispatcher's schedule is in scheduled-routes.ts.
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
  queueWorker({ name: 'send-queue → sender', queueVariable: 'QUEUE_URL', functionId: 'sender', pollers: 2 });

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
