import type { BucketDecision } from './token-bucket.ts';

/**
 * The account-wide message budget of batches (docs/decisions/0005-account-message-budget.md): the same bucket as
 * `TokenBuckets` (`rate` messages a second refill up to `burst`), kept as one number in one table
 * item per account so that every function instance draws from it. Pure: time is passed in, and the
 * repository (shared/platform/rate-limit/message-budget-store.ts) turns each step into one conditional write.
 *
 * GCRA (virtual scheduling): the state is `tat`, the theoretical arrival time (epoch ms) at which
 * the bucket is full again. A full bucket has `tat ≤ now`; the bucket holds
 * `(now + burst·interval − tat) / interval` tokens, where `interval = 1000 / rate` ms is one
 * message's share. A batch of `n` is admitted while the bucket holds a whole token (as
 * `TokenBuckets.take`), i.e. `tat ≤ now + (burst − 1)·interval`, and moves `tat` on by
 * `n·interval` from `max(tat, now)`, which may take the bucket into debt (`tat` beyond
 * `now + burst·interval`): nothing is admitted until time has caught up.
 *
 * DynamoDB update expressions have no `max()`, so the charge is one of two exclusive writes, each
 * with its condition: `fresh` (no item, or `tat ≤ now`: a full bucket) sets `tat = now + cost`;
 * `debt` (`now < tat ≤ admitUntil`) adds `cost` to `tat`. When a write's condition fails, the item
 * it found (`tat`) names the next step (`stepFor`), or the refusal.
 *
 * A rate of 0 (a test setting: nothing refills) keeps the same arithmetic on a clock that stands
 * still at 0, with one unit per message: `tat` then counts the messages charged.
 */
export interface BudgetPolicy {
  /** Messages a second (`RATE_LIMIT_RPS`). */
  rate: number;
  /** Bucket size (`RATE_LIMIT_BURST`), at least 1. */
  burst: number;
}

export interface BudgetCharge {
  policy: BudgetPolicy;
  messages: number;
  /** The budget's clock: now, epoch ms (0 when the rate is 0). */
  clock: number;
  /** One message's share of `tat`: 1000 / rate ms (1 when the rate is 0). */
  interval: number;
  /** What this charge adds to `tat`: `messages · interval`. */
  cost: number;
  /** Admitted while `tat ≤ admitUntil`: the bucket holds at least one whole token. */
  admitUntil: number;
  /**
   * The item's TTL (epoch seconds, the table's `expires_at`): an hour after the bucket is full
   * again, whatever this write leaves `tat` at (so an item is never removed while it still holds a
   * debt); a day after the last charge when the rate is 0.
   */
  expiresAt: number;
}

/** After its bucket is full again, how long an idle account's item is kept. */
export const budgetItemLingerSeconds = 3600;
/** With a rate of 0 (nothing refills), how long the item is kept after its last charge. */
export const standingBudgetLifetimeSeconds = 24 * 3600;

/** The charge of `messages` messages at `nowMs`. */
export function planCharge(policy: BudgetPolicy, messages: number, nowMs: number): BudgetCharge {
  const refills = policy.rate > 0;
  const clock = refills ? nowMs : 0;
  const interval = refills ? 1000 / policy.rate : 1;
  const cost = Math.max(0, messages) * interval;
  const admitUntil = clock + (Math.max(1, policy.burst) - 1) * interval;
  const expiresAt = refills
    ? Math.ceil((admitUntil + cost) / 1000) + budgetItemLingerSeconds
    : Math.floor(nowMs / 1000) + standingBudgetLifetimeSeconds;
  return { policy, messages, clock, interval, cost, admitUntil, expiresAt };
}

export type BudgetStep = 'fresh' | 'debt' | 'refused';

/** The write a charge needs when the stored `tat` is `tat` (undefined: no item), or its refusal. */
export function stepFor(charge: BudgetCharge, tat: number | undefined): BudgetStep {
  if (tat === undefined || tat <= charge.clock) return 'fresh';
  return tat <= charge.admitUntil ? 'debt' : 'refused';
}

/** `tat` after an admitted charge: `max(tat, clock) + cost` (what either write leaves). */
export function tatAfter(charge: BudgetCharge, tat: number | undefined): number {
  return Math.max(tat ?? charge.clock, charge.clock) + charge.cost;
}

/**
 * The answer in the shape of `TokenBuckets`' (for the same RateLimit-* and Retry-After headers):
 * `tat` is the stored value after the charge when allowed, the value that refused it otherwise.
 */
export function budgetDecision(charge: BudgetCharge, tat: number, allowed: boolean): BucketDecision {
  const { policy, clock, interval, admitUntil } = charge;
  const secondsFor = (ms: number): number => {
    if (ms <= 0) return 0;
    return policy.rate > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 60;
  };
  const tokens = (clock + policy.burst * interval - tat) / interval;
  return {
    allowed,
    limit: policy.burst,
    remaining: Math.max(0, Math.floor(tokens + 1e-6)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, secondsFor(tat - admitUntil)),
    resetSeconds: secondsFor(tat - clock),
  };
}

/**
 * Two answers about the same caller (the instance's bucket and the account-wide budget) as one:
 * allowed only when both allow, the fewer tokens, the longer waits.
 */
export function stricterOf(a: BucketDecision, b: BucketDecision): BucketDecision {
  return {
    allowed: a.allowed && b.allowed,
    limit: Math.min(a.limit, b.limit),
    remaining: Math.min(a.remaining, b.remaining),
    retryAfterSeconds: Math.max(a.retryAfterSeconds, b.retryAfterSeconds),
    resetSeconds: Math.max(a.resetSeconds, b.resetSeconds),
  };
}
