import type { Worker } from '../platform/worker.ts';

/** Counts committed message changes (table stream) into the statistics, exactly once per record. */
export const statsCounterWorker = {
  id: 'stats-counter',
  trigger: 'table-stream-counting',
  summary: 'Counts committed message changes (table stream) into the statistics, exactly once per record',
  impact:
    'statistics and the per-domain dashboard stop moving; nothing is lost while the table stream keeps the changes (24 h), and the counts catch up once it recovers',
  // Adds each stream batch's counts to the counter rows (the stream itself comes from the trigger).
  access: { table: 'write' },
} as const satisfies Worker;

/** The functions of this wing that no HTTP route invokes: the worker table (shared/workers.ts) lists them. */
export const statsWorkers = [statsCounterWorker] as const;
