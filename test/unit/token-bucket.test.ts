import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { accountKey, addressKey } from '../../shared/platform/middleware/rate-limit.ts';
import { TokenBuckets } from '../../shared/platform/rate-limit/token-bucket.ts';

describe('token bucket', () => {
  it('allows a full burst, then refuses with the seconds until one token is back', () => {
    const buckets = new TokenBuckets(2, 3);
    const t0 = 1_000_000;
    const decisions = [0, 1, 2, 3].map(() => buckets.take('k', t0));
    assert.deepEqual(
      decisions.map((decision) => [decision.allowed, decision.remaining]),
      [
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ],
    );
    const refused = decisions[3];
    assert.equal(refused?.limit, 3);
    assert.equal(refused?.retryAfterSeconds, 1, 'one token at 2/s takes half a second, rounded up to 1');
    assert.equal(refused?.resetSeconds, 2, '3 tokens at 2/s take 1.5 s, rounded up');
  });

  it('refills with elapsed time, never above the burst', () => {
    const buckets = new TokenBuckets(1, 2);
    buckets.take('k', 0);
    buckets.take('k', 0);
    assert.equal(buckets.take('k', 0).allowed, false);
    assert.equal(buckets.take('k', 999).allowed, false, 'not yet a whole token');
    assert.equal(buckets.take('k', 1_000).allowed, true);
    const later = buckets.take('k', 3_600_000);
    assert.equal(later.allowed, true);
    assert.equal(later.remaining, 1, 'capped at the burst of 2, minus this request');
  });

  it('charges more than a token after the fact: the bucket goes into debt, repaid by the refill', () => {
    const buckets = new TokenBuckets(10, 20);
    assert.equal(buckets.take('k', 0).allowed, true, 'admitted with a full bucket');
    const charged = buckets.charge('k', 49, 0);
    assert.equal(charged.remaining, 0, 'never shown below zero');
    assert.equal(charged.resetSeconds, 5, '20 − 1 − 49 = −30: 50 tokens to refill at 10/s');
    const refused = buckets.take('k', 2_000);
    assert.equal(refused.allowed, false, 'still −10 after 2 s');
    assert.equal(refused.retryAfterSeconds, 2, 'one whole token is 1.1 s away, rounded up');
    assert.equal(buckets.take('k', 3_099).allowed, false);
    assert.equal(buckets.take('k', 3_100).allowed, true, 'debt repaid and one token back');
    // A bucket with a single token left admits a charge of any size.
    const fresh = new TokenBuckets(0, 1);
    assert.equal(fresh.take('b', 0).allowed, true);
    fresh.charge('b', 499, 0);
    assert.equal(fresh.take('b', 60_000).allowed, false);
  });

  it('keeps callers apart', () => {
    const buckets = new TokenBuckets(0, 1);
    assert.equal(buckets.take('a', 0).allowed, true);
    assert.equal(buckets.take('a', 0).allowed, false);
    assert.equal(buckets.take('b', 0).allowed, true);
  });

  it('never refills at rate 0 and then tells callers to come back in 60 s', () => {
    const buckets = new TokenBuckets(0, 1);
    buckets.take('k', 0);
    const refused = buckets.take('k', 10 * 60_000);
    assert.equal(refused.allowed, false);
    assert.equal(refused.retryAfterSeconds, 60);
  });

  it('evicts the oldest key when full, so memory stays bounded', () => {
    const buckets = new TokenBuckets(0, 1, 2);
    buckets.take('a', 0);
    buckets.take('b', 0);
    buckets.take('c', 0);
    assert.equal(buckets.take('a', 0).allowed, true, 'a was evicted and starts with a full bucket');
    assert.equal(buckets.take('c', 0).allowed, false);
  });
});

describe('rate-limit keys', () => {
  it('are the verified account or the source address, never anything the caller makes up', () => {
    assert.equal(accountKey('acct-1'), 'account:acct-1');
    assert.equal(addressKey('10.0.0.1'), 'ip:10.0.0.1');
    assert.equal(addressKey('2001:db8::1'), 'ip:2001:db8::1');
  });
});
