import { deadLetterWorker, inboundQueueWorker, sendQueueWorker } from './delivery-workers.ts';
import { inboundMailWorker } from './inbound-mail-server.ts';
import { schedulesWorker } from './scheduled-routes.ts';
import { smtpSinkWorker } from './smtp-sink.ts';
import { tableStreamWorker, webhookQueueWorker } from './webhook-workers.ts';

/**
 * Background pieces of the local host that stand in for AWS event sources: the SQS → sender
 * event-source loop, schedules, the recipients' SMTP server. Each area adds its worker here.
 */
export interface LocalWorkerContext {
  dataDir: string;
  env: Record<string, string>;
}

export interface LocalWorker {
  name: string;
  /** Starts the worker; may add variables to `env` that later workers and the handlers need. */
  start(context: LocalWorkerContext): Promise<void>;
  stop(): Promise<void>;
}

export const localWorkers: Array<() => LocalWorker> = [
  // The SMTP sink first: it sets SMTP_URL for the sender.
  smtpSinkWorker,
  sendQueueWorker,
  deadLetterWorker,
  schedulesWorker,
  tableStreamWorker,
  webhookQueueWorker,
  // Receiving: the SES stand-in (inbound MX) and the inbound queue → inbound function mapping.
  inboundMailWorker,
  inboundQueueWorker,
];
