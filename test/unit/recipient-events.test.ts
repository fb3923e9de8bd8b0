import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'vitest';
import { interpretSesEvent } from '../../shared/delivery/model/ses-events.ts';
import { applyRecipientUpdates, type Recipient } from '../../shared/delivery/model/status.ts';
import { outcomeFromRelay } from '../../shared/delivery/send-message.ts';
import { type HistoryEntry, recipientEntry } from '../../shared/messages/model/message.ts';
import { recipientEvents } from '../../shared/messages/model/recipient-events.ts';
import { applySuppressions } from '../../shared/suppressions/model/suppressions.ts';

const created = '2026-11-20T10:40:00.000Z';
const sentAt = '2026-11-20T10:40:01.000Z';
const pending = (email: string): Recipient => ({ email, kind: 'to', status: 'pending', updated_at: created });
const start: HistoryEntry[] = [
  { status: 'queued', at: created, detail: 'immediate' },
  { status: 'processing', at: created, detail: 'send attempt 1' },
];

describe("each recipient's events, from the history", () => {
  test('SMTP: accepted recipients are sent then delivered with the reply; a refused one bounced, never sent', () => {
    const message = {
      recipients: [pending('fine@example.net'), pending('bounce@example.net'), pending('listed@example.net')],
      to: [],
      cc: [],
      bcc: [],
      created_at: created,
    };
    // The pre-send check suppresses one recipient, then the relay refuses one at RCPT.
    const checked = applySuppressions(
      message.recipients,
      new Map([
        [
          'listed@example.net',
          {
            email: 'listed@example.net',
            reason: 'manual',
            stream: 'all',
            detail: null,
            message_uuid: null,
            created_at: created,
          },
        ],
      ]),
      created,
    );
    const outcome = outcomeFromRelay(
      { ...message, recipients: checked.recipients },
      {
        response: '250 2.0.0 Ok: queued as 4F3A',
        finalHop: true,
        recipients: [
          {
            email: 'fine@example.net',
            outcome: 'accepted',
            permanent: true,
            response: '250 2.0.0 Ok: queued as 4F3A',
          },
          {
            email: 'bounce@example.net',
            outcome: 'rejected',
            permanent: true,
            response: '550 5.1.1 Recipient address rejected',
          },
        ],
      },
      sentAt,
    );
    const [fine, bounced, listed] = recipientEvents(outcome.recipients, [
      ...start,
      ...checked.history,
      ...outcome.history,
    ]);
    assert.deepEqual(fine, [
      { status: 'sent', at: sentAt, response: '250 2.0.0 Ok: queued as 4F3A' },
      { status: 'delivered', at: sentAt, response: '250 2.0.0 Ok: queued as 4F3A' },
    ]);
    assert.deepEqual(bounced, [
      { status: 'bounced', at: sentAt, response: '550 5.1.1 Recipient address rejected' },
    ]);
    assert.equal(listed?.length, 1);
    assert.equal(listed?.[0]?.status, 'suppressed');
    assert.match(listed?.[0]?.response ?? '', /suppression list/);
  });

  test("SES: delivery, delay, bounce and complaint carry SES's classification and diagnostic code", () => {
    const fixture = (name: string) =>
      interpretSesEvent(
        JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ses', name), 'utf8')),
      );
    let recipients = [pending('recipient@example.com'), pending('bounce@example.com')];
    const history: HistoryEntry[] = [
      ...start,
      { status: 'sent', at: sentAt, detail: 'SES accepted the message (0100)' },
    ];
    for (const name of ['delivered.json', 'delivery-delayed.json', 'bounced.json', 'complaint.json']) {
      const effect = fixture(name);
      assert.ok(effect !== undefined);
      const applied = applyRecipientUpdates(recipients, effect.updates, effect.at);
      recipients = applied.recipients;
      for (const update of applied.applied)
        history.push(
          recipientEntry(update.status, effect.at, update.email, update.detail ?? '', update.kind),
        );
      history.push(...effect.notes);
    }
    const [delivered, bounced] = recipientEvents(recipients, history);
    assert.deepEqual(
      delivered?.map(({ at: _at, ...event }) => event),
      [
        { status: 'sent', response: 'SES accepted the message (0100)' },
        { status: 'delivered', response: '250 2.6.0 Message received' },
        {
          status: 'delayed',
          delay_type: 'TransientCommunicationFailure',
          diagnostic_code: 'smtp; 421 4.4.1 Unable to connect to remote host',
        },
        { status: 'complained', complaint_type: 'abuse' },
      ],
    );
    assert.deepEqual(
      bounced?.map(({ at: _at, ...event }) => event),
      [
        { status: 'sent', response: 'SES accepted the message (0100)' },
        {
          status: 'bounced',
          bounce_type: 'Permanent',
          bounce_subtype: 'General',
          diagnostic_code: 'smtp; 550 5.1.1 user unknown',
        },
      ],
    );
    // In order of time, whatever order the events arrived in.
    for (const list of [delivered, bounced])
      assert.deepEqual(
        list?.map((event) => event.at),
        [...(list ?? [])].map((event) => event.at).sort(),
      );
  });

  test('a status the history does not hold (failed for the whole message, or a full history) comes from the recipient', () => {
    const failedAt = '2026-11-20T11:00:00.000Z';
    const [event] = recipientEvents(
      [{ email: 'a@example.net', status: 'failed', detail: 'The send queue gave up', updated_at: failedAt }],
      [...start, { status: 'failed', at: failedAt, detail: 'The send queue gave up' }],
    );
    assert.deepEqual(event, [{ status: 'failed', at: failedAt, response: 'The send queue gave up' }]);
  });

  test('a recipient still pending has no events', () => {
    assert.deepEqual(recipientEvents([pending('a@example.net')], start), [[]]);
  });
});
