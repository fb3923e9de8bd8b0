import type { Worker } from '../platform/worker.ts';

/** Turns committed message changes (table stream) into webhook events, one queue job per endpoint. */
export const webhookFanoutWorker = {
  id: 'webhook-fanout',
  trigger: 'table-stream',
  summary: 'Turns committed message changes (table stream) into webhook events, one queue job per endpoint',
  impact:
    'webhook events stop being created; they are not lost while the table stream keeps them (24 h), and follow once it recovers',
  // Reads endpoints, stores events, queues one job per endpoint (the stream itself comes from the trigger).
  access: { table: 'write', webhookQueue: 'send' },
} as const satisfies Worker;

/** Delivers webhook events: signed POSTs, retried on the schedule, dead-lettered after the last. */
export const webhookDeliveryWorker = {
  id: 'webhook-delivery',
  trigger: 'webhook-queue',
  summary: 'Delivers webhook events: signed POSTs, retried on the schedule, dead-lettered after the last',
  impact: 'webhook receivers stop getting events; queued jobs wait and are delivered once it recovers',
  // Decrypts secrets, records attempts, disables endpoints on 410, queues retries, dead-letters the last.
  access: {
    table: 'write',
    webhookSecrets: 'decrypt',
    webhookQueue: 'send',
    webhookDeadLetterQueue: 'send',
  },
} as const satisfies Worker;

/** The functions of this wing that no HTTP route invokes: the worker table (shared/workers.ts) lists them. */
export const webhooksWorkers = [webhookFanoutWorker, webhookDeliveryWorker] as const;
