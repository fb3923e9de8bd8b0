import type { ScheduledEvent } from 'aws-lambda';
import { type EventSource, loadFunction, startEventSource } from './event-source.ts';
import type { LocalWorker } from './workers.ts';

/**
 * The delivery pipeline's stand-ins for AWS event sources: the send queue → sender mapping, the
 * dead-letter queue → dead-letter mapping, and the dispatcher's one-minute schedule
 * (DISPATCHER_INTERVAL_SECONDS, default 60).
 */
const report = (what: string) => (error: unknown) => {
  if ((error as { name?: string }).name === 'AbortError') return;
  process.stderr.write(`${what}: ${error instanceof Error ? error.message : String(error)}\n`);
};

interface QueueMapping {
  name: string;
  /** The variable that holds the queue's URL. */
  queueVariable: 'QUEUE_URL' | 'DEAD_LETTER_QUEUE_URL';
  functionId: string;
  pollers?: number;
}

/** Like a Lambda event source mapping: long-polls one queue and feeds batches to one function. */
function queueWorker({ name, queueVariable, functionId, pollers }: QueueMapping): LocalWorker {
  let source: EventSource | undefined;
  return {
    name,
    async start({ env }) {
      source = startEventSource({
        queueUrl: env[queueVariable] as string,
        functionId,
        pollers,
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

export function dispatcherWorker(): LocalWorker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  return {
    name: 'dispatcher schedule',
    async start() {
      const seconds = Number(process.env.DISPATCHER_INTERVAL_SECONDS ?? 60);
      const interval = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 60_000;
      timer = setInterval(() => {
        if (running !== undefined) return;
        running = (async () => {
          const handler =
            await loadFunction<(event: Partial<ScheduledEvent>) => Promise<unknown>>('dispatcher');
          await handler({
            source: 'aws.events',
            'detail-type': 'Scheduled Event',
            time: new Date().toISOString(),
            detail: {},
          });
        })()
          .catch(report('dispatcher'))
          .finally(() => {
            running = undefined;
          });
      }, interval);
      timer.unref();
    },
    async stop() {
      if (timer !== undefined) clearInterval(timer);
      await running;
    },
  };
}
