import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { planDueEntry, watchAgainAt } from '../../shared/delivery/model/dispatch-plan.ts';
import {
  applyRecipientUpdates,
  claimDecision,
  messageStatusFromRecipients,
  needsMessageEntry,
  type Recipient,
} from '../../shared/delivery/model/status.ts';
import { outcomeFromRelay } from '../../shared/delivery/send-message.ts';

const recipient = (email: string, status: Recipient['status']): Recipient => ({
  email,
  kind: 'to',
  status,
  updated_at: '2026-01-01T00:00:00.000Z',
});

describe('message status from recipient statuses', () => {
  test('delivered only when every recipient is delivered', () => {
    assert.equal(
      messageStatusFromRecipients([recipient('a@x', 'delivered'), recipient('b@x', 'delivered')]),
      'delivered',
    );
  });
  test('sent while any recipient is pending, even next to a bounce', () => {
    assert.equal(
      messageStatusFromRecipients([recipient('a@x', 'bounced'), recipient('b@x', 'pending')]),
      'sent',
    );
  });
  test('bounced when one bounced and none is pending', () => {
    assert.equal(
      messageStatusFromRecipients([recipient('a@x', 'bounced'), recipient('b@x', 'delivered')]),
      'bounced',
    );
  });
  test('failed when recipients failed without a bounce', () => {
    assert.equal(
      messageStatusFromRecipients([recipient('a@x', 'failed'), recipient('b@x', 'delivered')]),
      'failed',
    );
  });
});

describe('recipient updates', () => {
  test('match addresses case-insensitively and never return to pending', () => {
    const { recipients, applied } = applyRecipientUpdates(
      [recipient('Ann@X.test', 'pending'), recipient('bob@x.test', 'delivered')],
      [
        { email: 'ann@x.test', status: 'delivered', detail: '250 ok' },
        { email: 'bob@x.test', status: 'pending' },
      ],
      '2026-01-02T00:00:00.000Z',
    );
    assert.deepEqual(
      recipients.map((entry) => entry.status),
      ['delivered', 'delivered'],
    );
    assert.equal(recipients[0]?.detail, '250 ok');
    assert.equal(applied.length, 1);
  });
  test('a late bounce overrides a delivery, a repeated event changes nothing', () => {
    const first = applyRecipientUpdates(
      [recipient('a@x', 'delivered')],
      [{ email: 'a@x', status: 'bounced' }],
      't',
    );
    assert.equal(first.recipients[0]?.status, 'bounced');
    const again = applyRecipientUpdates(first.recipients, [{ email: 'a@x', status: 'bounced' }], 't');
    assert.equal(again.applied.length, 0);
    const back = applyRecipientUpdates(first.recipients, [{ email: 'a@x', status: 'delivered' }], 't');
    assert.equal(back.recipients[0]?.status, 'bounced');
  });
});

describe('claim decisions', () => {
  const now = Date.parse('2026-05-01T12:00:00Z');
  test('queued is claimed; a deleted or cancelled message is skipped', () => {
    assert.deepEqual(claimDecision({ status: 'queued' }, now), { action: 'claim', from: 'queued' });
    assert.equal(claimDecision(undefined, now).action, 'skip');
    assert.equal(claimDecision({ status: 'cancelled' }, now).action, 'skip');
    assert.equal(claimDecision({ status: 'delivered' }, now).action, 'skip');
    assert.equal(claimDecision({ status: 'waiting' }, now).action, 'skip');
  });
  test('a live lease is left to its holder, an expired one is taken over', () => {
    assert.equal(claimDecision({ status: 'processing', lease_until: now + 1 }, now).action, 'retry-later');
    assert.equal(claimDecision({ status: 'processing' }, now).action, 'retry-later');
    assert.deepEqual(claimDecision({ status: 'processing', lease_until: now }, now), {
      action: 'claim',
      from: 'processing',
    });
  });
  test('a scheduled message is claimed only once send_at has passed', () => {
    assert.equal(claimDecision({ status: 'scheduled', send_at: '2026-05-01T12:00:01Z' }, now).action, 'skip');
    assert.equal(
      claimDecision({ status: 'scheduled', send_at: '2026-05-01T11:59:59Z' }, now).action,
      'claim',
    );
  });
});

describe('dispatch plan', () => {
  const now = Date.parse('2026-05-01T12:00:00Z');
  const settings = { maxAttempts: 3 };
  test('scheduled within 15 minutes is released with a delay ending at send_at', () => {
    const sendAt = new Date(now + 61_500).toISOString();
    assert.deepEqual(planDueEntry({ status: 'scheduled', dueAtMs: now + 61_500, sendAt }, now, settings), {
      action: 'release-scheduled',
      delaySeconds: 62,
    });
  });
  test('scheduled further ahead waits; past send_at is released without delay', () => {
    const later = now + 16 * 60_000;
    assert.equal(
      planDueEntry(
        { status: 'scheduled', dueAtMs: later, sendAt: new Date(later).toISOString() },
        now,
        settings,
      ).action,
      'none',
    );
    assert.deepEqual(
      planDueEntry(
        { status: 'scheduled', dueAtMs: now - 5000, sendAt: new Date(now - 5000).toISOString() },
        now,
        settings,
      ),
      { action: 'release-scheduled', delaySeconds: 0 },
    );
  });
  test('stranded queued messages and expired leases are queued again; exhausted ones fail', () => {
    assert.equal(
      planDueEntry({ status: 'queued', dueAtMs: now - 1 }, now, settings).action,
      're-enqueue-queued',
    );
    assert.equal(planDueEntry({ status: 'queued', dueAtMs: now + 1 }, now, settings).action, 'none');
    assert.equal(
      planDueEntry(
        { status: 'processing', dueAtMs: now - 1, leaseUntil: now - 1, attempts: 1 },
        now,
        settings,
      ).action,
      're-enqueue-expired',
    );
    assert.equal(
      planDueEntry(
        { status: 'processing', dueAtMs: now - 1, leaseUntil: now + 10, attempts: 1 },
        now,
        settings,
      ).action,
      'none',
    );
    assert.equal(
      planDueEntry(
        { status: 'processing', dueAtMs: now - 1, leaseUntil: now - 1, attempts: 3 },
        now,
        settings,
      ).action,
      'fail',
    );
  });
  test('waiting messages are failed visibly when their hold ends; cancelled ones are never dispatched', () => {
    assert.deepEqual(planDueEntry({ status: 'waiting', dueAtMs: now - 1 }, now, settings), {
      action: 'expire-hold',
      reason: 'held by manual-wait for 30 days without manual-send or manual-cancel; not sent',
    });
    assert.equal(planDueEntry({ status: 'waiting', dueAtMs: now + 1 }, now, settings).action, 'none');
    assert.equal(planDueEntry({ status: 'cancelled', dueAtMs: now - 1 }, now, settings).action, 'none');
  });
});

describe('re-arming a watch entry', () => {
  const now = Date.parse('2026-05-01T12:00:00Z');
  const lease = 120_000;
  test('a queued message is looked at again at its re-enqueue time, or at the end of a lease taken now', () => {
    assert.equal(watchAgainAt({ status: 'queued', dueAtMs: now + 60_000 }, now, lease), now + 60_000);
    assert.equal(watchAgainAt({ status: 'queued', dueAtMs: now + 300_000 }, now, lease), now + lease);
    assert.equal(watchAgainAt({ status: 'queued', dueAtMs: Number.NaN }, now, lease), now + lease);
  });
  test('a processing message is looked at again when its lease, or the take-over time, ends', () => {
    assert.equal(
      watchAgainAt({ status: 'processing', dueAtMs: now + 30_000, leaseUntil: now + 30_000 }, now, lease),
      now + 30_000,
    );
    // A failed attempt released the lease; the take-over time is later.
    assert.equal(
      watchAgainAt({ status: 'processing', dueAtMs: now + 240_000, leaseUntil: now - 5 }, now, lease),
      now + 240_000,
    );
    // A new claim after a failed attempt: the lease is later than the old take-over time.
    assert.equal(
      watchAgainAt({ status: 'processing', dueAtMs: now - 5, leaseUntil: now + 90_000 }, now, lease),
      now + 90_000,
    );
    assert.equal(watchAgainAt({ status: 'processing', dueAtMs: Number.NaN }, now, lease), now + lease);
  });
  test('never at or before the run: the next window holds it', () => {
    assert.equal(watchAgainAt({ status: 'queued', dueAtMs: now - 10 }, now, lease), now + 1);
    assert.equal(watchAgainAt({ status: 'processing', dueAtMs: now, leaseUntil: now }, now, lease), now + 1);
  });
});

describe('the history of a relay answer', () => {
  const message = {
    recipients: [recipient('ada@example.org', 'pending')],
    to: [{ email: 'ada@example.org' }],
    cc: [],
    bcc: [],
    created_at: '2026-01-01T00:00:00.000Z',
  } as Parameters<typeof outcomeFromRelay>[0];
  const at = '2026-01-01T00:00:01.000Z';

  test('a delivered recipient: delivered once, about the recipient with the SMTP answer', () => {
    const outcome = outcomeFromRelay(
      message,
      {
        response: '250 2.0.0 Ok: queued as 7F',
        recipients: [
          { email: 'ada@example.org', outcome: 'accepted', permanent: false, response: '250 2.1.5 Ok' },
        ],
        finalHop: true,
      },
      at,
    );
    assert.equal(outcome.status, 'delivered');
    assert.deepEqual(
      outcome.history.map((entry) => [entry.status, entry.recipient]),
      [
        ['sent', undefined],
        ['delivered', 'ada@example.org'],
      ],
    );
  });

  test('a status no recipient entry says (partly delivered) still gets its own entry', () => {
    assert.equal(
      needsMessageEntry('delivered', [{ status: 'bounced', at, recipient: 'b@example.org' }]),
      true,
    );
    assert.equal(
      needsMessageEntry('bounced', [{ status: 'bounced', at, recipient: 'b@example.org' }]),
      false,
    );
    assert.equal(needsMessageEntry('failed', [{ status: 'failed', at }]), true);
  });
});
