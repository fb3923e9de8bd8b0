import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { createDnsChecker } from '../../shared/domains/dkim/dns-check.ts';
import {
  chunkTxtValue,
  compareDnsRecords,
  dkimDnsName,
  dkimDnsValue,
  isValidSelector,
  maxNewKeysPerDay,
  maxRetiredKeySets,
  newSelector,
  nextKeyAllowedAt,
  parseTagList,
  retiredKeysBeyondLimit,
} from '../../shared/domains/dkim/model/dkim.ts';
import type { TxtLookupResult } from '../../shared/platform/dns/txt-lookup.ts';

const rsaKey = `MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA${'x'.repeat(348)}IDAQAB`;
const edKey = 'JkcQYmKCPGkv5jWsS8WNTkDt36REs3nPejuSW6/RIjw=';

describe('DKIM record rules', () => {
  it('names selectors by algorithm and day, as valid DNS labels', () => {
    const now = new Date('2026-11-22T23:59:59+00:00');
    assert.equal(newSelector('rsa-sha256', now, 'A1B2C3D4'), 'rsa-20261122-a1b2c3');
    assert.equal(newSelector('ed25519-sha256', now, '0f0f0f'), 'ed-20261122-0f0f0f');
    assert.ok(isValidSelector(newSelector('rsa-sha256', now, 'abcdef')));
    assert.equal(
      dkimDnsName('rsa-20261122-a1b2c3', 'example.test'),
      'rsa-20261122-a1b2c3._domainkey.example.test',
    );
  });

  it('splits any value into ≤255-character strings that join back to it', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 2000 }), (value) => {
        const chunks = chunkTxtValue(value);
        assert.equal(chunks.join(''), value);
        for (const chunk of chunks) assert.ok(chunk.length >= 1 && chunk.length <= 255);
      }),
    );
    assert.equal(chunkTxtValue(dkimDnsValue('rsa-sha256', rsaKey)).length, 2);
  });

  it('parses tag lists with whitespace and keeps the first of duplicate tags', () => {
    const tags = parseTagList(' v = DKIM1 ;K=rsa; p= AB CD ;p=EF; junk');
    assert.equal(tags.get('v'), 'DKIM1');
    assert.equal(tags.get('k'), 'rsa');
    assert.equal(tags.get('p'), 'AB CD');
  });

  it('compares published records with our key', () => {
    const value = dkimDnsValue('rsa-sha256', rsaKey);
    assert.equal(compareDnsRecords([], 'rsa-sha256', rsaKey), 'pending');
    assert.equal(compareDnsRecords([chunkTxtValue(value)], 'rsa-sha256', rsaKey), 'verified');
    // k= defaults to rsa; folding whitespace inside p= is allowed (RFC 6376 3.6.1).
    const folded = `v=DKIM1; p=${rsaKey.slice(0, 100)} ${rsaKey.slice(100)}`;
    assert.equal(compareDnsRecords([[folded]], 'rsa-sha256', rsaKey), 'verified');
    assert.equal(compareDnsRecords([[`v=DKIM1; k=rsa; p=${edKey}`]], 'rsa-sha256', rsaKey), 'mismatch');
    assert.equal(compareDnsRecords([['v=DKIM1; k=rsa; p=']], 'rsa-sha256', rsaKey), 'mismatch');
    assert.equal(compareDnsRecords([[`v=DKIM2; p=${rsaKey}`]], 'rsa-sha256', rsaKey), 'mismatch');
    assert.equal(compareDnsRecords([[value], [value]], 'rsa-sha256', rsaKey), 'mismatch');
    assert.equal(compareDnsRecords([[`v=DKIM1; k=rsa; p=${edKey}`]], 'ed25519-sha256', edKey), 'mismatch');
    assert.equal(
      compareDnsRecords([[dkimDnsValue('ed25519-sha256', edKey)]], 'ed25519-sha256', edKey),
      'verified',
    );
  });
});

describe('DKIM DNS check cache', () => {
  function harness(answers: TxtLookupResult[]) {
    let clock = 1_000_000;
    const names: string[] = [];
    const check = createDnsChecker({
      now: () => clock,
      lookup: async (name) => {
        names.push(name);
        const answer = answers.shift();
        assert.ok(answer, 'an answer was prepared');
        return answer;
      },
    });
    return {
      check,
      names,
      advance: (ms: number) => {
        clock += ms;
      },
    };
  }
  const ours = [chunkTxtValue(dkimDnsValue('rsa-sha256', rsaKey))];

  it('keeps verified and unreachable for at most 30 s', async () => {
    const { check, names, advance } = harness([
      { kind: 'found', records: ours },
      { kind: 'failed', reason: 'ETIMEOUT' },
    ]);
    assert.equal(await check('s._domainkey.a.test', 'rsa-sha256', rsaKey), 'verified');
    advance(29_999);
    assert.equal(await check('s._domainkey.a.test', 'rsa-sha256', rsaKey), 'verified');
    assert.equal(names.length, 1);
    advance(1);
    assert.equal(await check('s._domainkey.a.test', 'rsa-sha256', rsaKey), 'unreachable');
    assert.equal(await check('s._domainkey.a.test', 'rsa-sha256', rsaKey), 'unreachable');
    assert.equal(names.length, 2);
  });

  it('asks again every time while pending or mismatched', async () => {
    const { check, names } = harness([
      { kind: 'absent' },
      { kind: 'found', records: [['v=DKIM1; p=other']] },
      { kind: 'found', records: ours },
    ]);
    assert.equal(await check('s._domainkey.b.test', 'rsa-sha256', rsaKey), 'pending');
    assert.equal(await check('s._domainkey.b.test', 'rsa-sha256', rsaKey), 'mismatch');
    assert.equal(await check('s._domainkey.b.test', 'rsa-sha256', rsaKey), 'verified');
    assert.equal(names.length, 3);
  });

  it('shares one lookup between concurrent checks, and never reuses a result for another key', async () => {
    const { check, names } = harness([
      { kind: 'found', records: ours },
      { kind: 'found', records: ours },
    ]);
    const results = await Promise.all([
      check('s._domainkey.c.test', 'rsa-sha256', rsaKey),
      check('s._domainkey.c.test', 'rsa-sha256', rsaKey),
    ]);
    assert.deepEqual(results, ['verified', 'verified']);
    assert.equal(names.length, 1);
    assert.equal(await check('s._domainkey.c.test', 'ed25519-sha256', edKey), 'mismatch');
    assert.equal(names.length, 2);
  });
});

describe('DKIM key bounds', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');
  const hoursAgo = (hours: number) => new Date(now - hours * 3600_000).toISOString();

  it('allows a new key until the 24-hour window holds the limit, then names when the oldest leaves it', () => {
    const keys = Array.from({ length: maxNewKeysPerDay - 1 }, (_, index) => ({
      selector: `k${index}`,
      status: 'retired' as const,
      createdAt: hoursAgo(20 - index),
    }));
    assert.equal(nextKeyAllowedAt(keys, now), undefined);
    // Companions are part of their key, and keys older than a day do not count.
    const companions = keys.map((key) => ({
      ...key,
      selector: `${key.selector}c`,
      companionOf: key.selector,
    }));
    const old = { selector: 'old', status: 'retired' as const, createdAt: hoursAgo(30) };
    assert.equal(nextKeyAllowedAt([...keys, ...companions, old], now), undefined);
    const full = [...keys, { selector: 'new', status: 'active' as const, createdAt: hoursAgo(0) }];
    assert.equal(nextKeyAllowedAt(full, now), Date.parse(hoursAgo(20)) + 24 * 3600_000);
  });

  it('keeps the newest retired sets with their companions, and ignores keys already expired', () => {
    const sets = Array.from({ length: maxRetiredKeySets + 3 }, (_, index) => [
      {
        selector: `e${index}`,
        status: 'retired' as const,
        createdAt: hoursAgo(100 - index),
        retiredAt: hoursAgo(99 - index),
      },
      {
        selector: `e${index}c`,
        status: 'retired' as const,
        createdAt: hoursAgo(100 - index),
        retiredAt: hoursAgo(99 - index),
        companionOf: `e${index}`,
      },
    ]).flat();
    const expired = {
      selector: 'gone',
      status: 'retired' as const,
      createdAt: hoursAgo(200),
      retiredAt: hoursAgo(199),
      expiresAt: Math.floor(now / 1000) - 1,
    };
    const active = { selector: 'live', status: 'active' as const, createdAt: hoursAgo(1) };
    assert.deepEqual(retiredKeysBeyondLimit([...sets, expired, active], now).sort(), [
      'e0',
      'e0c',
      'e1',
      'e1c',
      'e2',
      'e2c',
    ]);
    assert.deepEqual(retiredKeysBeyondLimit(sets.slice(0, 2 * maxRetiredKeySets), now), []);
  });
});
