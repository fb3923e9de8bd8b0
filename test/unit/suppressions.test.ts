import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'vitest';
import { interpretSesEvent } from '../../shared/delivery/model/ses-events.ts';
import { messageStatusFromRecipients, type Recipient } from '../../shared/delivery/model/status.ts';
import { keys } from '../../shared/platform/table/keys.ts';
import {
  applySuppressions,
  decodeSuppressionCursor,
  encodeSuppressionCursor,
  hardBouncesOf,
  type Suppression,
} from '../../shared/suppressions/model/suppressions.ts';
import { parseSuppressedAddress } from '../../shared/suppressions/schemas.ts';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ses', name), 'utf8'));
const at = '2026-11-22T09:15:00.000Z';
const pending = (email: string): Recipient => ({ email, kind: 'to', status: 'pending', updated_at: at });
const entry = (email: string, reason: Suppression['reason'] = 'hard_bounce'): Suppression => ({
  email,
  reason,
  stream: reason === 'unsubscribed' ? 'broadcast' : 'all',
  detail: '550 5.1.1',
  message_uuid: reason === 'manual' ? null : '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e',
  created_at: at,
});

describe('suppression: addresses and keys', () => {
  test('addresses are parsed like recipients and lower-cased whole', () => {
    assert.deepEqual(parseSuppressedAddress('Ada <Ada.L@Example.NET>'), {
      ok: true,
      email: 'ada.l@example.net',
    });
    assert.deepEqual(parseSuppressedAddress('x@bücher.example'), {
      ok: true,
      email: 'x@xn--bcher-kva.example',
    });
    for (const bad of ['', 'ada', 'a@b', 'a@@b.example', 'a@b.example\r\nBcc: c@d.example', 'ä@b.example']) {
      assert.equal(parseSuppressedAddress(bad).ok, false, bad);
    }
  });

  test('keys keep account and address apart: no partition key is shared by every account or message', () => {
    assert.notDeepEqual(keys.suppression('a#b', 'c@d.example'), keys.suppression('a', 'b#c@d.example'));
    assert.notEqual(keys.suppressionsOfAccount('a'), keys.suppressionsOfAccount('b'));
    assert.equal(keys.suppression('acct', 'x@y.example').pk, 'SUPPRESSION#x@y.example');
    assert.equal(keys.suppressionsSortKey('manual', at, 'x@y.example'), `manual#${at}#x@y.example`);
  });
});

describe('suppression: at send time', () => {
  test('listed recipients become suppressed with a reason; the others still go out', () => {
    const recipients = [pending('a@x.example'), pending('B@x.example'), pending('c@x.example')];
    const listed = new Map([['b@x.example', entry('b@x.example')]]);
    const checked = applySuppressions(recipients, listed, at);
    assert.deepEqual(checked.sendTo, ['a@x.example', 'c@x.example']);
    assert.equal(checked.allSuppressed, false);
    assert.equal(checked.recipients[1]?.status, 'suppressed');
    assert.match(checked.recipients[1]?.detail ?? '', /hard bounce on message 0193a1f2/);
    assert.deepEqual(
      checked.history.map((step) => [step.status, step.recipient]),
      [['suppressed', 'B@x.example']],
    );
  });

  test('every recipient listed: nothing to send, and the message ends suppressed', () => {
    const recipients = [pending('a@x.example'), { ...pending('a@x.example'), kind: 'cc' as const }];
    const checked = applySuppressions(
      recipients,
      new Map([['a@x.example', entry('a@x.example', 'manual')]]),
      at,
    );
    assert.deepEqual(checked.sendTo, []);
    assert.equal(checked.allSuppressed, true);
    assert.equal(checked.history.length, 2, 'one entry per address, one for the message');
    assert.equal(messageStatusFromRecipients(checked.recipients), 'suppressed');
  });

  test('suppressed recipients hold nothing back: delivered, bounced, failed as for the others', () => {
    const s = { status: 'suppressed' as const };
    assert.equal(messageStatusFromRecipients([s, { status: 'delivered' }]), 'delivered');
    assert.equal(messageStatusFromRecipients([s, { status: 'bounced' }, { status: 'delivered' }]), 'bounced');
    assert.equal(messageStatusFromRecipients([s, { status: 'failed' }]), 'failed');
    assert.equal(messageStatusFromRecipients([s, { status: 'pending' }]), 'sent');
    assert.equal(messageStatusFromRecipients([s, s]), 'suppressed');
  });

  test('only permanent (5xx) refusals are hard bounces', () => {
    const causes = hardBouncesOf('m-1', [
      { email: 'Hard@X.example', outcome: 'rejected', permanent: true, response: '550 5.1.1 no such user' },
      { email: 'soft@x.example', outcome: 'rejected', permanent: false, response: '452 4.2.2 full' },
      { email: 'ok@x.example', outcome: 'accepted', permanent: true },
    ]);
    assert.deepEqual(causes, [
      {
        email: 'hard@x.example',
        reason: 'hard_bounce',
        detail: '550 5.1.1 no such user',
        message_uuid: 'm-1',
      },
    ]);
  });
});

describe('suppression: SES events', () => {
  test('Bounce Permanent → hard_bounce; Complaint → complaint; Transient → nothing', () => {
    assert.deepEqual(interpretSesEvent(fixture('bounced.json'))?.suppress, [
      {
        email: 'bounce@example.com',
        reason: 'hard_bounce',
        detail: 'Permanent/General: smtp; 550 5.1.1 user unknown',
      },
    ]);
    assert.deepEqual(interpretSesEvent(fixture('complaint.json'))?.suppress, [
      { email: 'recipient@example.com', reason: 'complaint', detail: 'Complaint: abuse' },
    ]);
    assert.deepEqual(interpretSesEvent(fixture('bounced-transient.json'))?.suppress, []);
    assert.equal(interpretSesEvent(fixture('delivered.json'))?.suppress, undefined);
  });
});

describe('suppression: paging cursor', () => {
  const filters = { streams: ['manual'], from: undefined, to: undefined };
  test('round-trips, and is bound to the account and the filters', () => {
    const positions = { manual: { after: `${at}#a@x.example`, done: false } };
    const cursor = encodeSuppressionCursor('acct', filters, positions) as string;
    assert.deepEqual(decodeSuppressionCursor(cursor, 'acct', filters, ['manual']), { ok: true, positions });
    assert.equal(decodeSuppressionCursor(cursor, 'other', filters, ['manual']).ok, false);
    assert.equal(decodeSuppressionCursor(cursor, 'acct', { ...filters, from: at }, ['manual']).ok, false);
    assert.equal(decodeSuppressionCursor('not*base64', 'acct', filters, ['manual']).ok, false);
    assert.equal(encodeSuppressionCursor('acct', filters, { manual: { done: true } }), null);
  });

  test('a position that is not <created_at>#<address> is refused', () => {
    const forged = Buffer.from(
      JSON.stringify({ v: 1, k: 'suppressions', a: 'x', f: 'y', p: { manual: 'ACCOUNT#z' } }),
    );
    assert.equal(
      decodeSuppressionCursor(forged.toString('base64url'), 'acct', filters, ['manual']).ok,
      false,
    );
  });
});
