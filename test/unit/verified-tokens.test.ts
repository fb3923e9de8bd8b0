import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { VerifiedTokens } from '../../shared/platform/auth/verified-tokens.ts';

/** The verified-token cache behind bearer authentication (shared/platform/auth/token-verifier.ts). */
describe('verified-token cache', () => {
  const minute = 60_000;
  const t0 = Date.UTC(2026, 10, 22, 12, 0, 0);
  const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl';

  it('answers a token it verified until its exp, and never at or after it', () => {
    const cache = new VerifiedTokens<string>(5 * minute, 10);
    cache.set(token, 'ada', t0 + 2 * minute, t0);
    assert.equal(cache.get(token, t0), 'ada');
    assert.equal(cache.get(token, t0 + 2 * minute - 1), 'ada');
    assert.equal(cache.get(token, t0 + 2 * minute), undefined);
    // Gone once expired: an earlier clock does not bring it back.
    assert.equal(cache.get(token, t0), undefined);
    assert.equal(cache.size, 0);
  });

  it('trusts a long-lived token for the TTL only, and never remembers an expired one', () => {
    const cache = new VerifiedTokens<string>(5 * minute, 10);
    cache.set(token, 'ada', t0 + 60 * minute, t0);
    assert.equal(cache.get(token, t0 + 5 * minute - 1), 'ada');
    assert.equal(cache.get(token, t0 + 5 * minute), undefined);
    cache.set(token, 'ada', t0 - 1, t0);
    cache.set(token, 'ada', t0, t0);
    assert.equal(cache.size, 0);
  });

  it('finds only the very same token: a changed signature or payload is not found', () => {
    const cache = new VerifiedTokens<string>(5 * minute, 10);
    cache.set(token, 'ada', t0 + minute, t0);
    assert.equal(cache.get(`${token.slice(0, -1)}Q`, t0), undefined);
    assert.equal(cache.get(token.replace('.eyJzdWIiOiJhZGEifQ.', '.eyJzdWIiOiJldmUifQ.'), t0), undefined);
    assert.equal(cache.get(`${token}.`, t0), undefined);
    assert.equal(cache.get(token, t0), 'ada');
  });

  it('holds at most its bound, dropping the oldest first', () => {
    const cache = new VerifiedTokens<number>(5 * minute, 3);
    for (let index = 0; index < 5; index++) cache.set(`${token}${index}`, index, t0 + minute, t0);
    assert.equal(cache.size, 3);
    assert.equal(cache.get(`${token}0`, t0), undefined);
    assert.equal(cache.get(`${token}1`, t0), undefined);
    assert.deepEqual(
      [2, 3, 4].map((index) => cache.get(`${token}${index}`, t0)),
      [2, 3, 4],
    );
  });
});
