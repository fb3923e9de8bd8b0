import type { ScheduledEvent } from 'aws-lambda';
import { type RefillReport, refillKeyPool } from '#shared/domains/dkim/key-pool.ts';
import { log } from '#shared/platform/observability/log.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/** Runs every minute (EventBridge schedule): tops up the pool of RSA-2048 DKIM keys domain add takes. */
export const handler = observedWorker(async (_event?: Partial<ScheduledEvent>): Promise<RefillReport> => {
  const report = await refillKeyPool();
  if (report.added > 0) log('info', 'dkim key pool refilled', { ...report });
  return report;
});
