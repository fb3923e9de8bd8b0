import type { ScheduledEvent } from 'aws-lambda';
import { type BackgroundReport, runBackgroundChecks } from '#shared/domains/background.ts';
import { log } from '#shared/platform/observability/log.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/** Runs every 5 minutes (EventBridge schedule): the domains' due DNS checks. */
export const handler = observedWorker(async (_event?: Partial<ScheduledEvent>): Promise<BackgroundReport> => {
  const report = await runBackgroundChecks();
  if (report.due > 0) log('info', 'domain checks run', { ...report });
  return report;
});
