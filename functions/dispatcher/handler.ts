import type { ScheduledEvent } from 'aws-lambda';
import { type DispatchReport, dispatchDue } from '#shared/delivery/dispatch.ts';
import { log } from '#shared/platform/observability/log.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/** Runs every minute (EventBridge schedule): releases due scheduled mail, re-queues stranded mail. */
export const handler = observedWorker(async (_event?: Partial<ScheduledEvent>): Promise<DispatchReport> => {
  const report = await dispatchDue();
  if (report.released + report.requeued + report.takenOver + report.failed + report.errors > 0) {
    log('info', 'dispatcher run', { ...report });
  }
  return report;
});
