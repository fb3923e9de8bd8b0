import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import {
  type BudgetPolicy,
  budgetDecision,
  budgetItemLingerSeconds,
  planCharge,
  stepFor,
  stricterOf,
  tatAfter,
} from '../../shared/platform/rate-limit/message-budget.ts';
import { type BucketDecision, TokenBuckets } from '../../shared/platform/rate-limit/token-bucket.ts';

/**
 * The arithmetic of the account-wide message budget (GCRA on one stored number). `Store` plays the
 * table item: each charge takes the steps the repository takes (a write whose condition is
 * `stepFor`'s), so what is checked here is what the two conditional writes do.
 */
class Store {
  tat: number | undefined;
  expiresAt: number | undefined;
  writes = 0;

  readonly #policy: BudgetPolicy;

  constructor(policy: BudgetPolicy) {
    this.#policy = policy;
  }

  charge(messages: number, nowMs: number): BucketDecision {
    const plan = planCharge(this.#policy, messages, nowMs);
    const step = stepFor(plan, this.tat);
    if (step === 'refused') return budgetDecision(plan, this.tat as number, false);
    this.writes += 1;
    this.tat = tatAfter(plan, this.tat);
    this.expiresAt = plan.expiresAt;
    return budgetDecision(plan, this.tat, true);
  }
}

describe('account-wide message budget (GCRA)', () => {
  it('admits a batch while the bucket holds a whole token, into debt, then refuses until it refills', () => {
    const store = new Store({ rate: 50, burst: 100 });
    const t0 = 1_700_000_000_000;
    const first = store.charge(500, t0);
    assert.deepEqual(first, {
      allowed: true,
      limit: 100,
      remaining: 0,
      retryAfterSeconds: 0,
      resetSeconds: 10,
    });
    assert.equal(store.tat, t0 + 500 * 20, '500 messages at 20 ms each');

    // 100 − 500 = −400 tokens: a whole token is back after 401 × 20 ms = 8.02 s.
    const refused = store.charge(1, t0 + 1_000);
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    assert.equal(refused.retryAfterSeconds, 8, '401 tokens − 50 refilled = 351 tokens, 7.02 s, rounded up');
    assert.equal(refused.resetSeconds, 9);
    assert.equal(store.tat, t0 + 10_000, 'a refusal writes nothing');

    assert.equal(store.charge(1, t0 + 8_019).allowed, false, 'not yet a whole token');
    const again = store.charge(1, t0 + 8_020);
    assert.equal(again.allowed, true, 'one whole token back');
    assert.equal(again.remaining, 0);
    assert.equal(store.tat, t0 + 10_020);
  });

  it('a full bucket is absent or in the past: the charge starts from now, never from an old tat', () => {
    const store = new Store({ rate: 10, burst: 20 });
    store.charge(5, 0);
    const later = store.charge(3, 3_600_000);
    assert.equal(store.tat, 3_600_000 + 300);
    assert.equal(later.remaining, 17);
    const plan = planCharge({ rate: 10, burst: 20 }, 3, 3_600_000);
    assert.equal(stepFor(plan, undefined), 'fresh');
    assert.equal(stepFor(plan, 3_600_000), 'fresh', 'tat = now: full');
    assert.equal(stepFor(plan, 3_600_001), 'debt');
    assert.equal(stepFor(plan, 3_600_000 + 1_900), 'debt', '19 tokens used, one left');
    assert.equal(stepFor(plan, 3_600_000 + 1_901), 'refused', 'less than a whole token left');
  });

  it('decides as the per-instance TokenBuckets do, for any sequence of batches (one token per message)', () => {
    // A deterministic pseudo-random sequence of batch sizes and gaps; both buckets see the same.
    let seed = 7;
    const next = (bound: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % bound;
    };
    const policy = { rate: 50, burst: 100 };
    const store = new Store(policy);
    const buckets = new TokenBuckets(policy.rate, policy.burst);
    let now = 1_700_000_000_000;
    let admitted = 0;
    for (let request = 0; request < 2_000; request++) {
      // Sub-millisecond gaps: no request lands exactly on a whole token, where TokenBuckets'
      // floating-point refill (elapsed / 1000 × rate) could round either way.
      now += next(400) + next(997) / 997;
      const messages = 1 + next(request % 3 === 0 ? 200 : 5);
      const local = buckets.take('k', now);
      if (local.allowed) buckets.charge('k', messages - 1, now);
      const shared = store.charge(messages, now);
      assert.equal(shared.allowed, local.allowed, `request ${request}: ${messages} messages`);
      if (shared.allowed) admitted += 1;
    }
    assert.ok(admitted > 100 && admitted < 1_900, `a sequence that meets the limit often (${admitted})`);
  });

  it('one write per admitted batch, whatever its size; a refusal writes nothing', () => {
    const store = new Store({ rate: 50, burst: 100 });
    store.charge(500, 0);
    store.charge(1, 100);
    store.charge(500, 20_000);
    assert.equal(store.writes, 2);
  });

  it('keeps the item until an hour after the bucket is full again, whatever the write leaves', () => {
    const policy = { rate: 50, burst: 100 };
    const store = new Store(policy);
    const t0 = 1_700_000_000_000;
    store.charge(500, t0);
    store.charge(500, t0 + 8_020);
    const tat = store.tat as number;
    assert.ok((store.expiresAt as number) * 1000 >= tat + budgetItemLingerSeconds * 1000);
    // The bound holds for the largest debt the write could leave (tat at admitUntil, then + cost).
    const plan = planCharge(policy, 500, t0);
    assert.ok(plan.expiresAt * 1000 >= tatAfter(plan, plan.admitUntil) + budgetItemLingerSeconds * 1000);
  });

  it('a rate of 0 never refills: tat counts messages, and Retry-After is 60', () => {
    const store = new Store({ rate: 0, burst: 50 });
    const t0 = 1_700_000_000_000;
    const batch = store.charge(60, t0);
    assert.equal(batch.allowed, true);
    assert.equal(batch.remaining, 0);
    assert.equal(store.tat, 60);
    const refused = store.charge(1, t0 + 86_000_000);
    assert.equal(refused.allowed, false, 'a day later: still in debt');
    assert.equal(refused.retryAfterSeconds, 60);
    assert.equal(refused.resetSeconds, 60);

    const other = new Store({ rate: 0, burst: 50 });
    for (let request = 0; request < 49; request++) assert.equal(other.charge(1, t0).allowed, true);
    const last = other.charge(10, t0);
    assert.equal(last.allowed, true, 'the 50th token admits a batch of 10');
    assert.equal(other.charge(1, t0).allowed, false);
  });

  it('non-integer intervals: remaining counts whole tokens without rounding noise', () => {
    const store = new Store({ rate: 3, burst: 10 });
    const decision = store.charge(1, 1_700_000_000_123);
    assert.equal(decision.remaining, 9);
    assert.equal(store.charge(8, 1_700_000_000_123).remaining, 1);
    assert.equal(store.charge(1, 1_700_000_000_123).remaining, 0);
    const refused = store.charge(1, 1_700_000_000_123);
    assert.equal(refused.allowed, false);
    assert.equal(refused.retryAfterSeconds, 1, 'a third of a second, rounded up to 1');
  });

  it('the stricter of two answers: allowed only by both, the fewer tokens, the longer waits', () => {
    const local: BucketDecision = {
      allowed: true,
      limit: 100,
      remaining: 40,
      retryAfterSeconds: 0,
      resetSeconds: 2,
    };
    const shared: BucketDecision = {
      allowed: false,
      limit: 100,
      remaining: 0,
      retryAfterSeconds: 7,
      resetSeconds: 9,
    };
    assert.deepEqual(stricterOf(local, shared), {
      allowed: false,
      limit: 100,
      remaining: 0,
      retryAfterSeconds: 7,
      resetSeconds: 9,
    });
    assert.deepEqual(stricterOf(local, local), local);
  });
});
