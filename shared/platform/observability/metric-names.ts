/**
 * Every metric the service publishes, in one place (data only, so the stack, the local host and
 * the lean functions import it for free; `metrics.ts` has the functions that emit them).
 * Namespace `SvcMail` (POWERTOOLS_METRICS_NAMESPACE), dimension `service` (the stack name,
 * POWERTOOLS_SERVICE_NAME); the latency also by `route`. No per-account dimension: each distinct
 * dimension value is a separate, billed CloudWatch metric.
 */
export const defaultNamespace = 'SvcMail';

export const messageMetric = {
  accepted: 'MessagesAccepted',
  sent: 'MessagesSent',
  delivered: 'MessagesDelivered',
  bounced: 'MessagesBounced',
  complained: 'MessagesComplained',
  suppressed: 'MessagesSuppressed',
  failed: 'MessagesFailed',
} as const;

export type CountedStatus = keyof typeof messageMetric;

export const webhookMetric = {
  /** Every delivery attempt. */
  deliveries: 'WebhookDeliveries',
  /** Attempts that failed (refused, timed out, unreachable). */
  failures: 'WebhookDeliveryFailures',
  /** Events given up on after the last attempt (to the webhook dead-letter queue). */
  deadLettered: 'WebhookDeadLettered',
} as const;

/**
 * What the dashboard's per-domain rates are made of, dimensions `service` and `domain` (the sending
 * domain), published by the statistics consumer for what it counted (docs/stats.md). One billed
 * metric per sending domain and name: the platform's domains, not its accounts, are the unit.
 */
export const domainMetric = {
  sent: 'DomainSent',
  delivered: 'DomainDelivered',
  bounced: 'DomainBounced',
  complained: 'DomainComplained',
} as const;

export type DomainCounted = keyof typeof domainMetric;

/** Handler latency of one API request, dimensions `service` and `route` (`POST /message/add-1.0`). */
export const latencyMetric = 'HandlerLatency';

/** Units as they appear in the embedded metric format. */
export const metricUnits: Readonly<Record<string, 'Count' | 'Milliseconds'>> = {
  ...Object.fromEntries(Object.values(messageMetric).map((name) => [name, 'Count' as const])),
  ...Object.fromEntries(Object.values(webhookMetric).map((name) => [name, 'Count' as const])),
  ...Object.fromEntries(Object.values(domainMetric).map((name) => [name, 'Count' as const])),
  [latencyMetric]: 'Milliseconds',
};
