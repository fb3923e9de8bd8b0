import type { ScheduledEvent } from 'aws-lambda';
import { log } from '#shared/observability/log.ts';
import { observedWorker } from '#shared/observability/powertools.ts';
import { type DispatchReport, dispatchDue } from '#shared/services/delivery/dispatch.ts';

/** Runs every minute (EventBridge schedule): releases due scheduled mail, re-queues stranded mail. */
export const handler = observedWorker(async (_event?: Partial<ScheduledEvent>): Promise<DispatchReport> => {
  const report = await dispatchDue();
  if (report.released + report.requeued + report.takenOver + report.failed + report.errors > 0) {
    log('info', 'dispatcher run', { ...report });
  }
  return report;
});
