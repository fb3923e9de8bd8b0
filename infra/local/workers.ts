import { inboundMailWorker } from './inbound-mail-server.ts';
import {
  deadLetterWorker,
  inboundQueueWorker,
  sendQueueWorker,
  webhookQueueWorker,
} from './queue-workers.ts';
import { schedulesWorker } from './scheduled-routes.ts';
import { smtpSinkWorker } from './smtp-sink.ts';
import { countingStreamWorker, tableStreamWorker } from './table-stream-workers.ts';

/**
 * Background pieces of the local host that stand in for AWS: the queues' and the table stream's
 * event source mappings, schedules, the recipients' SMTP server and SES's inbound MX.
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
  countingStreamWorker,
  webhookQueueWorker,
  // Receiving: the SES stand-in (inbound MX) and the inbound queue → inbound function mapping.
  inboundMailWorker,
  inboundQueueWorker,
];
