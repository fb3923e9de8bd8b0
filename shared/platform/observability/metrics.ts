import { MetricUnit } from '@aws-lambda-powertools/metrics';
import {
  type CountedStatus,
  type DomainCounted,
  domainMetric,
  messageMetric,
  webhookMetric,
} from './metric-names.ts';
import { metrics, publishWithDimension } from './powertools.ts';

/**
 * What other modules call to count (names and units: metric-names.ts). Counts are buffered and
 * published by Powertools' `logMetrics` middleware when the invocation ends, as one
 * embedded-metric-format line.
 */
export type { CountedStatus };

/** Counts messages that reached `status` (accepted, sent, delivered, bounced, complained, suppressed, failed). */
export function countMessages(status: CountedStatus, count = 1): void {
  if (count > 0) metrics.addMetric(messageMetric[status], MetricUnit.Count, count);
}

/**
 * One webhook delivery attempt: every attempt counts as a delivery, a failed one also as a failure,
 * and one after which the event is given up on also as dead-lettered.
 */
export function countWebhookDelivery(ok: boolean, deadLettered = false): void {
  metrics.addMetric(webhookMetric.deliveries, MetricUnit.Count, 1);
  if (!ok) metrics.addMetric(webhookMetric.failures, MetricUnit.Count, 1);
  if (deadLettered) metrics.addMetric(webhookMetric.deadLettered, MetricUnit.Count, 1);
}

/** What the statistics consumer counted for one sending domain (the dashboard's per-domain rates). */
export function countForDomain(domain: string, counts: Partial<Record<DomainCounted, number>>): void {
  publishWithDimension(
    'domain',
    domain,
    Object.entries(counts)
      .filter(([, count]) => (count ?? 0) > 0)
      .map(([counted, count]) => [domainMetric[counted as DomainCounted], count as number] as const),
  );
}
