import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'vitest';
import { interpretSesEvent, platformSuppressionDetail } from '../../shared/delivery/model/ses-events.ts';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ses', name), 'utf8'));
const uuid = '5d0c7e3b-8a0e-4f7a-9d6c-2b1f0e9a7c11';

describe('SES events from EventBridge', () => {
  test('Email Delivered marks its recipients delivered with the remote reply', () => {
    const effect = interpretSesEvent(fixture('delivered.json'));
    assert.equal(effect?.messageUuid, uuid);
    assert.deepEqual(effect?.updates, [
      { email: 'recipient@example.com', status: 'delivered', detail: '250 2.6.0 Message received' },
    ]);
    assert.equal(effect?.at, '2026-11-20T10:40:03.184Z');
  });

  test('Email Bounced marks its recipients bounced with type and diagnostic code', () => {
    const effect = interpretSesEvent(fixture('bounced.json'));
    assert.deepEqual(effect?.updates, [
      {
        email: 'bounce@example.com',
        status: 'bounced',
        detail: 'Permanent/General: smtp; 550 5.1.1 user unknown',
        kind: 'Permanent/General',
      },
    ]);
  });

  test('an OnAccountSuppressionList bounce or complaint is recorded as suppressed by the shared list, never copied into the account’s list', () => {
    const bounce = interpretSesEvent(fixture('bounced-account-suppression.json'));
    assert.deepEqual(bounce?.updates, [
      { email: 'bounce@example.com', status: 'suppressed', detail: platformSuppressionDetail },
    ]);
    assert.deepEqual(bounce?.suppress, []);
    const event = fixture('complaint.json') as { detail: { complaint: Record<string, unknown> } };
    event.detail.complaint.complaintSubType = 'OnAccountSuppressionList';
    const complaint = interpretSesEvent(event);
    assert.equal(complaint?.updates[0]?.status, 'suppressed');
    assert.deepEqual(complaint?.notes, [], 'nobody complained about this message');
    assert.deepEqual(complaint?.suppress, []);
  });

  test('a complaint and a delivery delay are history notes, not status changes', () => {
    const complaint = interpretSesEvent(fixture('complaint.json'));
    assert.deepEqual(complaint?.updates, []);
    assert.equal(complaint?.notes[0]?.status, 'complaint');
    assert.match(complaint?.notes[0]?.detail ?? '', /recipient@example\.com: abuse/);
    const delay = interpretSesEvent(fixture('delivery-delayed.json'));
    assert.equal(delay?.notes[0]?.status, 'delayed');
    assert.match(delay?.notes[0]?.detail ?? '', /TransientCommunicationFailure: smtp; 421/);
    // SES's classification rides along, for the recipient's events (docs/messages.md).
    assert.equal(complaint?.notes[0]?.kind, 'abuse');
    assert.equal(delay?.notes[0]?.kind, 'TransientCommunicationFailure');
  });

  test('Email Rejected fails the whole message', () => {
    assert.equal(interpretSesEvent(fixture('rejected.json'))?.failure, 'Rejected by the relay: Bad content');
  });

  test('events that change nothing, or name no message of ours, are ignored', () => {
    assert.equal(interpretSesEvent(fixture('sent.json')), undefined);
    const foreign = fixture('delivered.json') as { detail: { mail: { tags: Record<string, unknown> } } };
    delete foreign.detail.mail.tags.message_uuid;
    assert.equal(interpretSesEvent(foreign), undefined);
    assert.equal(interpretSesEvent({ nonsense: true }), undefined);
    assert.equal(interpretSesEvent(null), undefined);
  });
});
