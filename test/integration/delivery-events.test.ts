import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventBridgeEvent } from 'aws-lambda';
import { describe, test } from 'vitest';
import { handler } from '../../functions/delivery-events/handler.ts';
import { getDeliveryMessage } from '../../shared/delivery/store/message-delivery.ts';
import { formatDate } from '../../shared/platform/time/format.ts';
import { putTestMessage, queryMessage } from '../support/delivery.ts';
import { mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

useHostEnvironment();

/**
 * A recorded SES event (test/fixtures/ses) re-addressed to one of this test's messages; with `at`,
 * every time in it is moved there (the recorded ones precede the messages a test puts now).
 */
function sesEvent(name: string, uuid: string, at?: string): EventBridgeEvent<string, unknown> {
  const text = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ses', name), 'utf8');
  const event = JSON.parse(
    at === undefined ? text : text.replace(/"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z"/g, `"${at}"`),
  );
  event.detail.mail.tags.message_uuid = [uuid];
  return event;
}

async function sentMessage(status: 'sent' | 'processing' = 'sent') {
  const account = uniqueAccount('ses');
  const uuid = await putTestMessage({
    account,
    domain: uniqueDomain('ses'),
    to: ['recipient@example.com', 'bounce@example.com'],
    status,
    ...(status === 'processing' ? { leaseUntil: Date.now() + 60_000 } : {}),
  });
  return { account, uuid };
}

describe('SES delivery events (EventBridge) recorded in the message history', () => {
  test('delivery, bounce, complaint and delay events settle recipients and the message', async () => {
    const { account, uuid } = await sentMessage();
    assert.deepEqual(await handler(sesEvent('delivered.json', uuid)), { result: 'recorded' });
    let message = await getDeliveryMessage(uuid);
    assert.equal(message?.status, 'sent', 'one recipient is still pending');
    assert.equal(message?.recipients[0]?.status, 'delivered');
    assert.equal(message?.recipients[0]?.detail, '250 2.6.0 Message received');

    assert.deepEqual(await handler(sesEvent('delivery-delayed.json', uuid)), { result: 'recorded' });
    assert.deepEqual(await handler(sesEvent('bounced.json', uuid)), { result: 'recorded' });
    message = await getDeliveryMessage(uuid);
    assert.equal(message?.status, 'bounced');
    assert.equal(message?.recipients[1]?.status, 'bounced');

    assert.deepEqual(await handler(sesEvent('complaint.json', uuid)), { result: 'recorded' });
    // The same event again (EventBridge delivers at least once) changes nothing.
    assert.deepEqual(await handler(sesEvent('bounced.json', uuid)), { result: 'ignored' });
    assert.deepEqual(await handler(sesEvent('complaint.json', uuid)), { result: 'ignored' });
    assert.deepEqual(await handler(sesEvent('sent.json', uuid)), { result: 'ignored' });

    const viewed = await queryMessage(await mintToken({ account }), uuid);
    const history = viewed.status_history.map((entry: { status: string; detail?: string }) => [
      entry.status,
      entry.detail,
    ]);
    assert.deepEqual(history.slice(1), [
      ['delivered', 'recipient@example.com: 250 2.6.0 Message received'],
      [
        'delayed',
        'recipient@example.com: TransientCommunicationFailure: smtp; 421 4.4.1 Unable to connect to remote host',
      ],
      ['bounced', 'bounce@example.com: Permanent/General: smtp; 550 5.1.1 user unknown'],
      ['complaint', 'recipient@example.com: abuse'],
    ]);
  });

  test("query by uuid shows each recipient's events with what SES said, in order of time", async () => {
    const { account, uuid } = await sentMessage();
    const minutesLater = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
    const delayedAt = minutesLater(1);
    const deliveredAt = minutesLater(2);
    const bouncedAt = minutesLater(3);
    const complainedAt = minutesLater(4);
    // Handled latest first (EventBridge does not keep SES's order): the events are listed by SES's
    // time, not by arrival.
    for (const [name, at] of [
      ['complaint.json', complainedAt],
      ['bounced.json', bouncedAt],
      ['delivered.json', deliveredAt],
      ['delivery-delayed.json', delayedAt],
    ] as const)
      assert.deepEqual(await handler(sesEvent(name, uuid, at)), { result: 'recorded' }, name);

    const viewed = await queryMessage(await mintToken({ account }), uuid);
    const [sent] = viewed.status_history;
    assert.equal(sent.status, 'sent');
    const [recipient, bounce] = viewed.recipients;
    assert.equal(recipient.email, 'recipient@example.com');
    assert.deepEqual(recipient.events, [
      { status: 'sent', at: sent.at },
      {
        status: 'delayed',
        at: formatDate(delayedAt),
        delay_type: 'TransientCommunicationFailure',
        diagnostic_code: 'smtp; 421 4.4.1 Unable to connect to remote host',
      },
      { status: 'delivered', at: formatDate(deliveredAt), response: '250 2.6.0 Message received' },
      { status: 'complained', at: formatDate(complainedAt), complaint_type: 'abuse' },
    ]);
    assert.equal(bounce.email, 'bounce@example.com');
    assert.deepEqual(bounce.events, [
      { status: 'sent', at: sent.at },
      {
        status: 'bounced',
        at: formatDate(bouncedAt),
        bounce_type: 'Permanent',
        bounce_subtype: 'General',
        diagnostic_code: 'smtp; 550 5.1.1 user unknown',
      },
    ]);
  });

  test('a Reject event fails the message and its pending recipients', async () => {
    const { uuid } = await sentMessage();
    assert.deepEqual(await handler(sesEvent('rejected.json', uuid)), { result: 'recorded' });
    const message = await getDeliveryMessage(uuid);
    assert.equal(message?.status, 'failed');
    assert.deepEqual(
      message?.recipients.map((recipient) => recipient.status),
      ['failed', 'failed'],
    );
    assert.equal(message?.history.at(-1)?.detail, 'Rejected by the relay: Bad content');
  });

  test('an event for an unknown message is dropped; one that overtook the sender is retried', async () => {
    assert.deepEqual(await handler(sesEvent('delivered.json', '6f1e1c0a-0000-4000-8000-000000000000')), {
      result: 'unknown-message',
    });
    const { uuid } = await sentMessage('processing');
    await assert.rejects(handler(sesEvent('delivered.json', uuid)), /still being sent/);
    assert.equal((await getDeliveryMessage(uuid))?.recipients[0]?.status, 'pending');
  });
});
