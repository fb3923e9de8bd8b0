import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, test, vi } from 'vitest';
import { handler as sender } from '../../functions/sender/handler.ts';
import { getDeliveryMessage } from '../../shared/delivery/store/message-delivery.ts';
import {
  addMessage,
  outboxDir,
  type SendingDomain,
  sendingDomain,
  smtpTransactions,
  verifyDkim,
  waitForStatus,
} from '../support/delivery.ts';
import { call, useHostEnvironment } from '../support/host.ts';
import { sqsRecord } from '../support/sqs-record.ts';
import { trackingUrls } from '../support/tracking.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * The copies of a tracked message (docs/tracking.md, "Copies"): each recipient gets their own over
 * real SMTP, the content route returns each copy byte for byte as the recipients' server (the
 * local SMTP sink) received it, and a retry after a partial send sends only the copies still owed
 * (the sink greylists `greylist…` recipients once with 451 4.7.1).
 */
useHostEnvironment();

let sending: SendingDomain;
let receiver: WebhookReceiver;

const html = () =>
  [
    '<!DOCTYPE html><html><head><title>Receipt</title></head><body>',
    '<p><a href="https://shop.example/orders/4711">Your order</a></p>',
    '<p><a href="https://shop.example/help">Help</a></p>',
    '</body></html>',
  ].join('\n');

/** The copy the sink received for one recipient (`outbox/copies/<uuid>/<recipient>.eml`). */
function receivedCopy(uuid: string, recipient: string): Buffer {
  const file = join(outboxDir(), 'copies', uuid, `${recipient.toLowerCase()}.eml`);
  assert.ok(existsSync(file), `the sink has ${recipient}'s copy`);
  return readFileSync(file);
}

async function contentOf(uuid: string, recipient?: string): Promise<Buffer> {
  const answer = await call('POST', '/message/content-1.0', {
    token: sending.token,
    body: { message_uuid: uuid, ...(recipient === undefined ? {} : { recipient }) },
  });
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.data.preview, false);
  const response = await fetch(answer.body.data.raw_url);
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}

/** The `message.sent` and `message.delivered` webhooks of one message, as `<type> <recipient>`. */
function deliveryEvents(uuid: string): string[] {
  return receiver.received
    .map((request) => JSON.parse(request.body))
    .filter((event) => event.data.message_uuid === uuid)
    .map((event) => `${event.type} ${event.data.recipient?.email}`)
    .sort();
}

beforeAll(async () => {
  sending = await sendingDomain('rsa-sha256');
  receiver = await startWebhookReceiver();
  const added = await call('POST', '/webhook/add-1.0', {
    token: sending.token,
    body: { url: `${receiver.url}/copies`, events: ['message.sent', 'message.delivered', 'message.failed'] },
  });
  assert.equal(added.status, 200, added.text);
});

afterAll(async () => {
  await receiver?.close();
});

describe('tracked copies', () => {
  test('the content route returns each recipient’s copy byte for byte as delivered', async () => {
    const to = ['ada@example.net', 'grace@example.net'];
    const { uuid } = await addMessage(sending.token, {
      message_sender: `shop@${sending.domain}`,
      to,
      subject: 'Your receipt',
      tracking: { opens: true, clicks: true },
      content: { kind: 'html_only', html: html() },
    });
    await waitForStatus(sending.token, uuid, ['delivered']);
    assert.equal(smtpTransactions(uuid).length, 2, 'a copy per recipient');

    for (const recipient of to) {
      const delivered = receivedCopy(uuid, recipient);
      const rebuilt = await contentOf(uuid, recipient);
      assert.ok(rebuilt.equals(delivered), `${recipient}: the content route differs from the delivered copy`);
      const deliveredHtml = (await PostalMime.parse(delivered)).html ?? '';
      assert.equal(trackingUrls(deliveredHtml, 'c').length, 2, 'both links rewritten');
      assert.equal(trackingUrls(deliveredHtml, 'o').length, 1, 'and the pixel');
      assert.equal((await verifyDkim(rebuilt))[0]?.result, 'pass');
    }
    // The copies differ (each names its recipient); without `recipient`, the first one's.
    assert.ok(!receivedCopy(uuid, to[0] as string).equals(receivedCopy(uuid, to[1] as string)));
    assert.ok((await contentOf(uuid)).equals(receivedCopy(uuid, to[0] as string)));

    const stranger = await call('POST', '/message/content-1.0', {
      token: sending.token,
      body: { message_uuid: uuid, recipient: 'someone@example.net' },
    });
    assert.equal(stranger.status, 406, stranger.text);
    assert.equal(stranger.body.error.code, 107);
    assert.equal(stranger.body.error.details?.[0]?.field, 'recipient');
  });

  test('a retry after a partial send sends only the copies not yet accepted', async () => {
    const accepted = 'ada@example.net';
    const greylisted = `greylist-${Date.now()}@example.net`;
    const { uuid } = await addMessage(sending.token, {
      message_sender: `shop@${sending.domain}`,
      to: [accepted, greylisted],
      subject: 'Your receipt, again',
      tracking: { opens: true, clicks: true },
      content: { kind: 'html_only', html: html() },
    });

    // The first attempt: the first copy accepted, the second refused for now (451).
    const interrupted = await vi.waitFor(
      async () => {
        const message = await getDeliveryMessage(uuid);
        assert.ok(message?.history.some((entry) => /will retry the others/.test(entry.detail ?? '')));
        return message;
      },
      { timeout: 60_000, interval: 200 },
    );
    assert.equal(interrupted?.status, 'processing');
    assert.deepEqual(
      interrupted?.recipients.map((recipient) => recipient.status),
      ['delivered', 'pending'],
    );
    assert.deepEqual(
      smtpTransactions(uuid).map((transaction) => transaction.recipients),
      [[accepted]],
    );

    // The retry (the queue's redelivery, run here rather than after the visibility timeout).
    const retried = await sender({ Records: [sqsRecord(uuid, { receiveCount: 2 })] });
    assert.deepEqual(retried.batchItemFailures, []);
    const settled = await waitForStatus(sending.token, uuid, ['delivered']);
    assert.deepEqual(
      smtpTransactions(uuid).map((transaction) => transaction.recipients),
      [[accepted], [greylisted]],
      'exactly two copies: the accepted one is not sent again',
    );
    assert.deepEqual(
      settled.recipients.map((recipient: { status: string }) => recipient.status),
      ['delivered', 'delivered'],
    );
    for (const recipient of settled.recipients as Array<{ events: Array<{ status: string }> }>) {
      assert.deepEqual(
        recipient.events.map((event) => event.status),
        ['sent', 'delivered'],
      );
    }

    // One message.sent and one message.delivered per recipient.
    await receiver.waitFor(() => deliveryEvents(uuid).length >= 4);
    assert.deepEqual(deliveryEvents(uuid), [
      `message.delivered ${accepted}`,
      `message.delivered ${greylisted}`,
      `message.sent ${accepted}`,
      `message.sent ${greylisted}`,
    ]);

    // Each copy, composed in its own attempt, is still returned byte for byte.
    for (const recipient of [accepted, greylisted]) {
      assert.ok(
        (await contentOf(uuid, recipient)).equals(receivedCopy(uuid, recipient)),
        `${recipient}: the content route differs from the delivered copy`,
      );
    }
  });
});
