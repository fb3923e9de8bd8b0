import type { Worker } from '../platform/worker.ts';

/** Parses mail the receiving domains received (stored in S3 by SES) and stores it for its account. */
export const inboundWorker = {
  id: 'inbound',
  trigger: 'inbound-queue',
  summary: 'Parses mail the receiving domains received (stored in S3 by SES) and stores it for its account',
  impact:
    'received mail is not stored or announced; SES keeps it in S3 and its receipts wait in the inbound queue (then its dead-letter queue) until the function recovers',
  // Inbound (docs/inbound.md): reads the raw message SES stored and writes what it parsed, all
  // under inbound/; reads domains (receiving, owner) and sent messages (threading); writes items.
  access: { table: 'write', objects: { 'inbound/': ['read', 'write'] } },
} as const satisfies Worker;

/** The functions of this wing that no HTTP route invokes: the worker table (shared/workers.ts) lists them. */
export const inboundWorkers = [inboundWorker] as const;
