import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import type { Recipient } from '../../shared/delivery/model/status.ts';
import { outcomeFromRelay } from '../../shared/delivery/send-message.ts';
import { deriveChanges, type MessageSnapshot } from '../../shared/messages/model/changes.ts';
import type { HistoryEntry } from '../../shared/messages/model/message.ts';
import { recipientEvents } from '../../shared/messages/model/recipient-events.ts';

/**
 * A tracked message's copies are accepted one by one, possibly over two attempts (docs/tracking.md,
 * "Copies"): each write says `sent` for the copies it recorded and for no one else, so webhooks,
 * statistics and the query's recipient events count each recipient once. Relays that are not the
 * final hop (SES) leave accepted recipients pending, so their status alone cannot tell.
 */
const created = '2026-11-28T10:00:00.000Z';
const first = '2026-11-28T10:00:01.000Z';
const second = '2026-11-28T10:04:01.000Z';
const pending = (email: string): Recipient => ({ email, kind: 'to', status: 'pending', updated_at: created });
const accepted = (email: string) => ({
  email,
  outcome: 'accepted' as const,
  permanent: true,
  response: `250 Ok: queued as ${email}`,
});

const snapshot = (recipients: readonly Recipient[], history: readonly HistoryEntry[]): MessageSnapshot => ({
  messageUuid: '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e',
  accountId: 'acct',
  status: 'processing',
  subject: 'Receipt',
  recipients: recipients.map((recipient) => ({
    email: recipient.email,
    status: recipient.status,
    updatedAt: recipient.updated_at,
  })),
  history: [...history],
  tags: [],
  metadata: {},
});

describe('tracked copies sent over two attempts', () => {
  for (const finalHop of [true, false]) {
    test(`${finalHop ? 'final hop (SMTP)' : 'not the final hop (SES)'}: one message.sent per recipient, in the write that sent its copy`, () => {
      const start: HistoryEntry[] = [{ status: 'queued', at: created }];
      const message = {
        recipients: [pending('a@example.net'), pending('b@example.net')],
        to: [],
        cc: [],
        bcc: [],
        created_at: created,
      };
      // Attempt 1: a's copy accepted, b's refused for now (the round stops; b is retried).
      const one = outcomeFromRelay(message, { recipients: [accepted('a@example.net')], finalHop }, first, {
        perCopy: true,
      });
      const afterOne = [...start, ...one.history];
      const events1 = deriveChanges(snapshot(message.recipients, start), snapshot(one.recipients, afterOne));
      const sent1 = events1
        .filter((event) => event.type === 'message.sent')
        .map((event) => event.recipient?.email);
      assert.deepEqual(sent1, ['a@example.net']);

      // Attempt 2: only b's copy.
      const two = outcomeFromRelay(
        { ...message, recipients: one.recipients },
        { recipients: [accepted('b@example.net')], finalHop },
        second,
        { perCopy: true },
      );
      const afterTwo = [...afterOne, ...two.history];
      const events2 = deriveChanges(snapshot(one.recipients, afterOne), snapshot(two.recipients, afterTwo));
      const sent2 = events2
        .filter((event) => event.type === 'message.sent')
        .map((event) => event.recipient?.email);
      assert.deepEqual(sent2, ['b@example.net']);
      const delivered = [...events1, ...events2].filter((event) => event.type === 'message.delivered');
      assert.equal(delivered.length, finalHop ? 2 : 0);
      assert.equal(two.status, finalHop ? 'delivered' : 'sent');

      // The query's recipient events: each recipient sent once, at its own copy's time.
      const [a, b] = recipientEvents(two.recipients, afterTwo);
      assert.deepEqual(
        a?.map((event) => `${event.status} ${event.at}`),
        finalHop ? [`sent ${first}`, `delivered ${first}`] : [`sent ${first}`],
      );
      assert.deepEqual(
        b?.map((event) => `${event.status} ${event.at}`),
        finalHop ? [`sent ${second}`, `delivered ${second}`] : [`sent ${second}`],
      );
      assert.equal(a?.[0]?.response, '250 Ok: queued as a@example.net');
    });
  }

  test('a copy written when the relay took it has its entry once, however many writes follow', () => {
    const message = {
      recipients: [pending('a@example.net'), pending('b@example.net')],
      to: [],
      cc: [],
      bcc: [],
      created_at: created,
    };
    // a's copy written on its own, before b's went out: its `sent` entry and no message entry.
    const copy = outcomeFromRelay(
      message,
      { recipients: [accepted('a@example.net')], finalHop: true },
      first,
      {
        perCopy: true,
        messageEntry: false,
      },
    );
    assert.deepEqual(
      copy.history.map((entry) => `${entry.status} ${entry.recipient}`),
      ['sent a@example.net', 'delivered a@example.net'],
    );
    // The round's last write sees both answers; a's copy is in the composition record already.
    const last = outcomeFromRelay(
      {
        ...message,
        recipients: copy.recipients,
        composed: { at: first, transport: 'smtp', copies: [{ recipient: 0, at: first }] },
      },
      { recipients: [accepted('a@example.net'), accepted('b@example.net')], finalHop: true },
      second,
      { perCopy: true },
    );
    assert.deepEqual(
      last.history.map((entry) => `${entry.status} ${entry.recipient ?? ''}`.trim()),
      ['sent b@example.net', 'delivered b@example.net'],
    );
  });
});
