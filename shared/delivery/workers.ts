import type { Worker } from '../platform/worker.ts';

/** Claims, composes, DKIM-signs and sends queued messages. */
export const senderWorker = {
  id: 'sender',
  trigger: 'send-queue',
  summary: 'Claims, composes, DKIM-signs and sends queued messages',
  impact: 'queued messages are not sent; they wait in the queue and, after repeated failures, end as failed',
  // Claims, composes from the stored bodies, DKIM-signs (decrypts the key) and sends.
  access: {
    table: 'write',
    objects: { 'messages/': ['read'] },
    dkimKey: 'decrypt',
    mail: true,
    // A broadcast's one-click unsubscribe link (docs/streams.md).
    linkTokens: 'seal',
  },
} as const satisfies Worker;

/** Marks messages the queue gave up on as failed. */
export const deadLetterWorker = {
  id: 'dead-letter',
  trigger: 'dead-letter-queue',
  summary: 'Marks messages the queue gave up on as failed',
  impact: 'messages the queue gave up on stay in status queued/processing instead of failed',
  // Marks messages the queue gave up on as failed.
  access: { table: 'write' },
} as const satisfies Worker;

/** Queues due scheduled messages; re-queues stranded ones. */
export const dispatcherWorker = {
  id: 'dispatcher',
  trigger: 'schedule',
  everyMinutes: 1,
  summary: 'Queues due scheduled messages; re-queues stranded ones',
  impact: 'scheduled messages are not sent at their send_at time and stranded messages are not re-queued',
  // Moves due scheduled messages to the queue; re-queues stranded ones.
  access: { table: 'write', queue: 'send' },
} as const satisfies Worker;

/** Records SES delivery, bounce and complaint events. */
export const deliveryEventsWorker = {
  id: 'delivery-events',
  trigger: 'ses-events',
  summary: 'Records SES delivery, bounce and complaint events',
  impact: 'message and recipient statuses stop moving to delivered or bounced',
  // Records delivery, bounce and complaint events per recipient.
  access: { table: 'write' },
} as const satisfies Worker;

/** The functions of this wing that no HTTP route invokes: the worker table (shared/workers.ts) lists them. */
export const deliveryWorkers = [
  senderWorker,
  deadLetterWorker,
  dispatcherWorker,
  deliveryEventsWorker,
] as const;
