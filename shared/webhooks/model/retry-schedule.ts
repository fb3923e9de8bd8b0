/**
 * Pure rules of webhook delivery (docs/webhooks.md): what an answer means, when the next attempt
 * is due, and how long an SQS message may wait. No AWS, no network.
 */

/** Seconds between attempts: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (10 attempts, ~75 h). */
export const defaultRetrySchedule: readonly number[] = [
  5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
];

/** SQS's longest DelaySeconds; longer waits are re-enqueued with what remains. */
export const maxQueueDelaySeconds = 900;

/** How long an attempt may take before it counts as no answer. */
export const attemptTimeoutMs = 15_000;

/** Parses WEBHOOK_RETRY_SCHEDULE: comma-separated non-negative seconds (at least one). */
export function parseRetrySchedule(raw: string | undefined): readonly number[] {
  if (raw === undefined || raw.trim() === '') return defaultRetrySchedule;
  return parseSeconds('WEBHOOK_RETRY_SCHEDULE', raw);
}

/** Comma-separated non-negative seconds (at least one), or an error naming the variable. */
export function parseSeconds(name: string, raw: string): readonly number[] {
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.length === 0 || values.some((value) => !Number.isFinite(value) || value < 0)) {
    throw new Error(`${name} must be comma-separated seconds (>= 0), got "${raw}"`);
  }
  return values;
}

export type AttemptVerdict = 'delivered' | 'gone' | 'retry';

/** 2xx: delivered. 410: the receiver asks to stop (the endpoint is disabled). Anything else: retry. */
export function verdictOf(statusCode: number | undefined): AttemptVerdict {
  if (statusCode === undefined) return 'retry';
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode === 410) return 'gone';
  return 'retry';
}

/**
 * After attempt `attempt` (1-based) failed: the time of the next one, or undefined when it was the
 * last (attempts = schedule length + 1).
 */
export function nextAttemptAt(
  attempt: number,
  nowMs: number,
  schedule: readonly number[],
): number | undefined {
  const delay = schedule[attempt - 1];
  return delay === undefined ? undefined : nowMs + delay * 1000;
}

/** The SQS delay for a message due at `dueMs`: the wait, capped at SQS's 15 minutes. */
export function queueDelaySeconds(dueMs: number, nowMs: number): number {
  return Math.max(0, Math.min(maxQueueDelaySeconds, Math.ceil((dueMs - nowMs) / 1000)));
}

/** A message received this long before its due time goes back to the queue for the rest. */
export const earlyToleranceMs = 1_000;
