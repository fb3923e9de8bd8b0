/**
 * Endpoint health (docs/webhooks.md, "Failing endpoints"): pure rules, no AWS. An endpoint that keeps
 * failing (any attempt without a 2xx: an error status, a refused target, no complete answer within
 * the deadline) stops holding delivery workers: after `failuresBeforePause` failures in a row its
 * jobs wait (no attempt, no worker) until the pause ends, then one trial attempt decides: a 2xx ends
 * the pause for every waiting job, a failure pauses it again, longer. An endpoint that has failed
 * without a single success for `disableAfterMs` is disabled, as Svix does after 5 days; it receives
 * nothing more until it is added again.
 */
export interface EndpointHealth {
  /** Attempts without a 2xx since the last one with a 2xx. */
  consecutiveFailures: number;
  /** When the first of them was made (ISO 8601, UTC); absent while healthy. */
  failingSince?: string;
  /** Until when its jobs wait (ISO 8601, UTC); absent when they may go. */
  pausedUntil?: string;
}

export const healthy: EndpointHealth = { consecutiveFailures: 0 };

/** Failures in a row after which an endpoint's jobs wait. */
export const failuresBeforePause = 5;
/** The pauses after the 5th, 6th, 7th, 8th and 9th failure in a row; later ones are the last. */
export const pauseSeconds: readonly number[] = [60, 300, 900, 1800, 3600];
/** Failing without a success this long disables the endpoint. */
export const disableAfterMs = 5 * 24 * 3600 * 1000;
/** While one trial attempt is out, the other jobs wait this long (the attempt's 15 s deadline and 5 s). */
export const trialWindowMs = 20_000;

/** The pause after the `failures`-th failure in a row, in ms (0 below the threshold). */
export function pauseAfter(failures: number, pauses: readonly number[] = pauseSeconds): number {
  if (failures < failuresBeforePause) return 0;
  const index = Math.min(failures - failuresBeforePause, pauses.length - 1);
  return (pauses[index] as number) * 1000;
}

export type JobDecision =
  /** Attempt now. `trial` when the endpoint is paused and this job is the one trial attempt. */
  | { action: 'attempt'; trial: boolean }
  /** Wait until `untilMs` (re-queued; not an attempt). */
  | { action: 'wait'; untilMs: number };

/** What a job of this endpoint does now. */
export function decideJob(health: EndpointHealth, nowMs: number): JobDecision {
  if (health.pausedUntil === undefined) return { action: 'attempt', trial: false };
  const until = Date.parse(health.pausedUntil);
  if (Number.isFinite(until) && until > nowMs) return { action: 'wait', untilMs: until };
  return { action: 'attempt', trial: true };
}

export interface FailureOutcome {
  /** Set when the endpoint's jobs are to wait: until then (ISO 8601, UTC). */
  pausedUntil?: string;
  /** Set when the endpoint is to be disabled: the reason, as its query shows it. */
  disable?: string;
}

/**
 * What one more failed attempt at `nowMs` means, given the streak as stored with it counted
 * (`consecutiveFailures` includes it; `failingSince` is the streak's first failure).
 */
export function afterFailure(
  streak: { consecutiveFailures: number; failingSince: string },
  nowMs: number,
  formatDate: (iso: string) => string,
  pauses: readonly number[] = pauseSeconds,
): FailureOutcome {
  const pause = pauseAfter(streak.consecutiveFailures, pauses);
  const outcome: FailureOutcome = pause > 0 ? { pausedUntil: new Date(nowMs + pause).toISOString() } : {};
  if (nowMs - Date.parse(streak.failingSince) >= disableAfterMs) {
    outcome.disable = `Disabled after failing for ${Math.floor(disableAfterMs / 86_400_000)} days without a successful delivery (${streak.consecutiveFailures} failed attempts in a row since ${formatDate(streak.failingSince)})`;
  }
  return outcome;
}

export type HealthState = 'healthy' | 'failing' | 'paused' | 'disabled';

export function stateOf(health: EndpointHealth, enabled: boolean, nowMs: number): HealthState {
  if (!enabled) return 'disabled';
  if (health.consecutiveFailures === 0) return 'healthy';
  if (health.pausedUntil !== undefined && Date.parse(health.pausedUntil) > nowMs) return 'paused';
  return 'failing';
}

/** The note the endpoint's query shows: why it is paused or disabled, or null when all is well. */
export function healthNote(
  health: EndpointHealth,
  endpoint: { enabled: boolean; disabledReason?: string },
  nowMs: number,
  formatDate: (iso: string) => string,
): string | null {
  const state = stateOf(health, endpoint.enabled, nowMs);
  if (state === 'disabled') return endpoint.disabledReason ?? 'Disabled';
  if (state === 'healthy') return null;
  const since = health.failingSince === undefined ? '' : ` since ${formatDate(health.failingSince)}`;
  const streak = `${health.consecutiveFailures} failed attempt${health.consecutiveFailures === 1 ? '' : 's'} in a row${since}`;
  const disableAt =
    health.failingSince === undefined
      ? ''
      : `; without a successful delivery it is disabled at ${formatDate(new Date(Date.parse(health.failingSince) + disableAfterMs).toISOString())}`;
  if (state === 'paused') {
    return `Deliveries are paused until ${formatDate(health.pausedUntil as string)} after ${streak}; then one trial attempt decides whether they resume${disableAt}`;
  }
  return `${streak}; after ${failuresBeforePause} in a row deliveries pause${disableAt}`;
}
