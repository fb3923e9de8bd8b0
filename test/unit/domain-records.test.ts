import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { domainNameProblems } from '../../shared/domains/model/domain-name.ts';
import {
  type CheckState,
  compareRecord,
  type ExpectedRecord,
  expectedRecords,
  foldCheck,
  graceMs,
  hourMs,
  type RecordError,
  type RecordPurpose,
} from '../../shared/domains/model/records.ts';

const hosts = {
  mailFromMx: 'feedback-smtp.eu-west-1.amazonses.com',
  spfInclude: 'include:amazonses.com',
  inboundMx: 'inbound-smtp.eu-west-1.amazonaws.com',
};
const keys = [
  { selector: 'rsa-1', algorithm: 'rsa-sha256' as const, publicKey: 'MIIBkey' },
  { selector: 'ed-1', algorithm: 'ed25519-sha256' as const, publicKey: 'edkey=' },
];
const expected = expectedRecords(
  { domain: 'shop.example', mailFrom: 'bounce.shop.example', receiving: true, keys },
  hosts,
);
const byPurpose = (purpose: RecordPurpose) =>
  expected.find((record) => record.purpose === purpose) as ExpectedRecord;
const created = new Date('2026-11-01T00:00:00.000Z');
const at = (ms: number) => new Date(created.getTime() + ms);
const allGood = new Map<RecordPurpose, RecordError | undefined>(
  expected.map((record) => [record.purpose, undefined]),
);
const missingDkim = new Map(allGood).set('dkim', { code: 'HOST_NOT_FOUND', observed: [] });
const serverDown = new Map(allGood).set('dkim', { code: 'DNS_SERVER_ERROR', observed: ['ETIMEOUT'] });

describe('domain names', () => {
  it('refuses IP addresses, single labels, trailing dots, long names, Unicode not in IDNA form', () => {
    for (const name of [
      '192.0.2.1',
      '::1',
      'localhost',
      'shop.example.',
      `${'a.'.repeat(127)}com`,
      'bücher.example',
      'a_b.example',
      '-x.example',
      'x.123',
    ]) {
      assert.equal(domainNameProblems(name).length, 1, name);
    }
    assert.match(domainNameProblems('bücher.example')[0]?.message ?? '', /xn--bcher-kva\.example/);
    for (const name of ['example.test', 'xn--bcher-kva.example', 'a.b.c.example.com', 'Shop.Example']) {
      assert.deepEqual(domainNameProblems(name), [], name);
    }
  });
});

describe('expected records', () => {
  it('lists DKIM (both keys for Ed25519), MAIL FROM MX and SPF, DMARC (recommended), receiving MX', () => {
    assert.deepEqual(
      expected.map((record) => [record.purpose, record.type, record.name, record.required]),
      [
        ['dkim', 'TXT', 'rsa-1._domainkey.shop.example', true],
        ['dkim_ed25519', 'TXT', 'ed-1._domainkey.shop.example', true],
        ['mail_from_mx', 'MX', 'bounce.shop.example', true],
        ['mail_from_spf', 'TXT', 'bounce.shop.example', true],
        ['dmarc', 'TXT', '_dmarc.shop.example', false],
        ['receiving_mx', 'MX', 'shop.example', false],
      ],
    );
  });

  it('names what is wrong with what DNS answered', () => {
    const spf = byPurpose('mail_from_spf');
    assert.equal(compareRecord(spf, { kind: 'found', values: [spf.value] }), undefined);
    assert.equal(
      compareRecord(spf, { kind: 'found', values: ['v=spf1 a include:amazonses.com -all', 'google-site=x'] }),
      undefined,
    );
    assert.deepEqual(compareRecord(spf, { kind: 'found', values: [spf.value, 'v=spf1 mx ~all'] }), {
      code: 'MULTIPLE_RECORDS',
      observed: [spf.value, 'v=spf1 mx ~all'],
    });
    assert.equal(compareRecord(spf, { kind: 'found', values: ['v=spf1 mx ~all'] })?.code, 'INVALID_VALUE');
    assert.equal(compareRecord(spf, { kind: 'no-name' })?.code, 'HOST_NOT_FOUND');
    assert.equal(compareRecord(spf, { kind: 'no-type' })?.code, 'TYPE_NOT_FOUND');
    assert.deepEqual(compareRecord(spf, { kind: 'failed', reason: 'ESERVFAIL' }), {
      code: 'DNS_SERVER_ERROR',
      observed: ['ESERVFAIL'],
    });
    const dkim = byPurpose('dkim');
    assert.equal(
      compareRecord(dkim, { kind: 'found', values: ['v=DKIM1; k=rsa; p=MIIB key'.replace(' ', '')] }),
      undefined,
    );
    assert.equal(
      compareRecord(dkim, { kind: 'found', values: ['v=DKIM1; k=rsa; p=other'] })?.code,
      'INVALID_VALUE',
    );
    const mx = byPurpose('mail_from_mx');
    assert.equal(compareRecord(mx, { kind: 'found', values: [`10 ${hosts.mailFromMx}`] }), undefined);
    assert.equal(
      compareRecord(mx, { kind: 'found', values: [`10 ${hosts.mailFromMx}`, '20 mx.other'] })?.code,
      'MULTIPLE_RECORDS',
    );
    assert.equal(
      compareRecord(byPurpose('dmarc'), { kind: 'found', values: ['v=DMARC1; p=reject; rua=mailto:x@y'] }),
      undefined,
    );
  });
});

describe('status folding (clock injected)', () => {
  const pending: CheckState = {
    status: 'pending',
    sendingReady: false,
    createdAt: created.toISOString(),
    records: {},
  };

  it('verifies when every required record does; checks every 5 minutes in the first hour, then hourly', () => {
    const partly = foldCheck(pending, expected, missingDkim, at(60_000));
    assert.equal(partly.status, 'partially_verified');
    assert.equal(partly.sendingReady, false);
    assert.equal(partly.nextCheckAt, at(6 * 60_000).toISOString());
    assert.equal(
      foldCheck(pending, expected, missingDkim, at(2 * hourMs)).nextCheckAt,
      at(3 * hourMs).toISOString(),
    );
    const verified = foldCheck(pending, expected, allGood, at(60_000));
    assert.equal(verified.status, 'verified');
    assert.equal(verified.sendingReady, true);
    assert.equal(verified.nextCheckAt, at(60_000 + 24 * hourMs).toISOString());
  });

  it('fails a domain that never verified after 72 hours', () => {
    const failed = foldCheck(pending, expected, missingDkim, at(graceMs));
    assert.equal(failed.status, 'failed');
    assert.equal(failed.nextCheckAt, undefined);
    assert.equal(failed.records.dkim?.status, 'failed');
  });

  it('a verified domain that loses a record: temporary_failure (still sending) for 72 h, then failed', () => {
    const verified = foldCheck(pending, expected, allGood, at(0));
    const lost = foldCheck(verified, expected, missingDkim, at(24 * hourMs));
    assert.equal(lost.status, 'temporary_failure');
    assert.equal(lost.sendingReady, true);
    assert.equal(lost.records.dkim?.status, 'temporary_failure');
    assert.equal(lost.lostAt, at(24 * hourMs).toISOString());
    const still = foldCheck(lost, expected, missingDkim, at(24 * hourMs + graceMs - 1));
    assert.equal(still.status, 'temporary_failure');
    const failed = foldCheck(still, expected, missingDkim, at(24 * hourMs + graceMs));
    assert.equal(failed.status, 'failed');
    assert.equal(failed.sendingReady, false);
    const back = foldCheck(lost, expected, allGood, at(30 * hourMs));
    assert.equal(back.status, 'verified');
    assert.equal(back.lostAt, undefined);
  });

  it('a resolver failure never counts against a record', () => {
    const verified = foldCheck(pending, expected, allGood, at(0));
    const outage = foldCheck(verified, expected, serverDown, at(graceMs * 2));
    assert.equal(outage.status, 'verified');
    assert.equal(outage.records.dkim?.status, 'verified');
    assert.equal(outage.records.dkim?.error?.code, 'DNS_SERVER_ERROR');
  });
});
