import assert from 'node:assert/strict';
import { describe, test, vi } from 'vitest';
import {
  addMessage,
  outboxEml,
  queryMessage,
  runDispatcher,
  type SendingDomain,
  sendingDomain,
  smtpTransactions,
  verifyDkim,
  waitForStatus,
} from '../support/delivery.ts';
import { useHostEnvironment } from '../support/host.ts';

useHostEnvironment();

const settled = ['delivered', 'bounced', 'failed'];
const b64 = (text: string) => Buffer.from(text).toString('base64');

function contentOf(kind: string, domain: string): Record<string, unknown> {
  switch (kind) {
    case 'text_only':
      return { content: { kind, text: 'Plain text body\nwith two lines' } };
    case 'html_only':
      return { content: { kind, html: '<h1>Hello</h1><p>HTML only</p>' } };
    case 'mixed':
      return {
        content: { kind, text: 'Text part', html: '<p>HTML part</p>' },
        attachments: [
          { filename: 'invoice.pdf', content_type: 'application/pdf', content: b64('%PDF-1.4 fake') },
          { filename: 'notes.txt', content_type: 'text/plain', content: b64('some notes') },
        ],
      };
    default:
      return {
        content: {
          kind: 'eml',
          eml: b64(
            [
              `From: Billing <billing@${domain}>`,
              'To: eml-reader@example.net',
              'Subject: An EML message',
              'MIME-Version: 1.0',
              'Content-Type: text/plain; charset=utf-8',
              '',
              'Sent exactly as written.',
              '',
            ].join('\r\n'),
          ),
        },
      };
  }
}

async function sendAndCheck(sending: SendingDomain, kind: string): Promise<void> {
  const { uuid, status } = await addMessage(sending.token, {
    message_sender: `billing@${sending.domain}`,
    from: [{ email: `billing@${sending.domain}`, name: 'Billing' }],
    to: ['reader@example.net'],
    cc: ['copy@example.net'],
    bcc: ['secret-watcher@example.net'],
    reply_to: [`help@${sending.domain}`],
    subject: `Kind ${kind}`,
    ...contentOf(kind, sending.domain),
  });
  assert.equal(status, 'queued');
  const message = await waitForStatus(sending.token, uuid, settled);
  assert.equal(message.status, 'delivered', JSON.stringify(message.status_history));
  assert.ok(message.recipients.every((recipient: { status: string }) => recipient.status === 'delivered'));
  const history = message.status_history.map((entry: { status: string }) => entry.status);
  for (const step of ['queued', 'processing', 'sent', 'delivered']) assert.ok(history.includes(step), step);

  const eml = outboxEml(uuid);
  assert.ok(eml, 'the recipient MTA wrote the message to the outbox');
  const text = eml.toString('utf8');
  const head = text.slice(0, text.indexOf('\r\n\r\n'));
  assert.doesNotMatch(head, /secret-watcher/i, 'bcc never appears in the headers');
  assert.doesNotMatch(head, /^bcc:/im);
  const transactions = smtpTransactions(uuid);
  assert.equal(transactions.length, 1);
  assert.ok(transactions[0]?.recipients.includes('secret-watcher@example.net'), 'bcc is in the envelope');

  const dkim = await verifyDkim(eml);
  assert.equal(dkim[0]?.result, 'pass', JSON.stringify(dkim));
  assert.equal(dkim[0]?.algorithm, sending.algorithm);
  assert.equal(dkim[0]?.domain, sending.domain);
  if (kind === 'eml') {
    assert.match(text, /Sent exactly as written\./);
  } else {
    assert.match(head, new RegExp(`^Message-ID: <${uuid}@${sending.domain.replace(/\./g, '\\.')}>`, 'im'));
    assert.match(head, new RegExp(`^Reply-To: help@${sending.domain.replace(/\./g, '\\.')}`, 'im'));
    assert.match(head, /^Cc: copy@example\.net/im);
  }
  if (kind === 'mixed') {
    assert.match(text, /filename=invoice\.pdf/);
    assert.match(text, /multipart\/mixed/);
  }
}

describe('delivery end to end through the local host', () => {
  for (const algorithm of ['rsa-sha256', 'ed25519-sha256'] as const) {
    test(`every content kind reaches delivered, signed with ${algorithm}`, async () => {
      const sending = await sendingDomain(algorithm);
      await Promise.all(
        ['text_only', 'html_only', 'mixed', 'eml'].map((kind) => sendAndCheck(sending, kind)),
      );
    });
  }

  test('a recipient the MTA refuses ends bounced with the SMTP reply in the history', async () => {
    const sending = await sendingDomain('ed25519-sha256');
    const { uuid } = await addMessage(sending.token, {
      message_sender: `alerts@${sending.domain}`,
      to: ['bounce-me@example.net', 'fine@example.net'],
      subject: 'One of you bounces',
      content: { kind: 'text_only', text: 'hello' },
    });
    const message = await waitForStatus(sending.token, uuid, settled);
    assert.equal(message.status, 'bounced');
    const byEmail = Object.fromEntries(
      message.recipients.map((recipient: { email: string; status: string }) => [recipient.email, recipient]),
    );
    assert.equal(byEmail['bounce-me@example.net'].status, 'bounced');
    assert.match(byEmail['bounce-me@example.net'].detail, /^550 5\.1\.1/);
    assert.equal(byEmail['fine@example.net'].status, 'delivered');
    const bounce = message.status_history.find((entry: { status: string }) => entry.status === 'bounced');
    assert.match(bounce.detail, /bounce-me@example\.net: 550 5\.1\.1/);
    assert.deepEqual(smtpTransactions(uuid)[0]?.recipients, ['fine@example.net']);
  });

  test('a message whose every recipient bounces is bounced and never transmitted', async () => {
    const sending = await sendingDomain('rsa-sha256');
    const { uuid } = await addMessage(sending.token, {
      message_sender: `alerts@${sending.domain}`,
      to: ['bounce@example.net'],
      content: { kind: 'text_only', text: 'hello' },
    });
    const message = await waitForStatus(sending.token, uuid, settled);
    assert.equal(message.status, 'bounced');
    assert.equal(smtpTransactions(uuid).length, 0);
    assert.equal(outboxEml(uuid), undefined);
  });

  test('scheduled mail is not sent before send_at and is sent within 60 s of it', async () => {
    const sending = await sendingDomain('rsa-sha256');
    const sendAt = new Date(Date.now() + 20_000);
    const { uuid, status } = await addMessage(sending.token, {
      message_sender: `news@${sending.domain}`,
      to: ['later@example.net'],
      content: { kind: 'text_only', text: 'on time' },
      scheduling: { mode: 'scheduled', send_at: sendAt.toISOString().replace('Z', '+00:00') },
    });
    assert.equal(status, 'scheduled');
    // The one-minute schedule would do this within 60 s; running it now makes the test prompt.
    await runDispatcher();
    const early = await queryMessage(sending.token, uuid);
    if (Date.now() < sendAt.getTime()) {
      assert.ok(['scheduled', 'queued'].includes(early.status), early.status);
      assert.equal(smtpTransactions(uuid).length, 0);
    }
    const message = await waitForStatus(sending.token, uuid, settled);
    assert.equal(message.status, 'delivered');
    const sent = message.status_history.find((entry: { status: string }) => entry.status === 'sent');
    const sentAt = Date.parse(sent.at);
    assert.ok(sentAt >= sendAt.getTime(), `sent at ${sent.at}, before send_at ${sendAt.toISOString()}`);
    assert.ok(sentAt - sendAt.getTime() <= 60_000, `sent ${sentAt - sendAt.getTime()} ms after send_at`);
  });

  test('held mail waits through dispatcher runs, then leaves on manual-send', async () => {
    const sending = await sendingDomain('ed25519-sha256');
    const { uuid, status } = await addMessage(sending.token, {
      message_sender: `held@${sending.domain}`,
      to: ['patient@example.net'],
      content: { kind: 'text_only', text: 'released later' },
      scheduling: { mode: 'manual-wait' },
    });
    assert.equal(status, 'waiting');
    await runDispatcher();
    assert.equal((await queryMessage(sending.token, uuid)).status, 'waiting');
    assert.equal(smtpTransactions(uuid).length, 0);

    const released = await addMessage(sending.token, {
      message_sender: `held@${sending.domain}`,
      scheduling: { mode: 'manual-send', message_uuid: uuid },
    });
    assert.deepEqual(released, { uuid, status: 'queued' });
    assert.equal((await waitForStatus(sending.token, uuid, settled)).status, 'delivered');
    assert.equal(smtpTransactions(uuid).length, 1);
  });

  test('cancelled mail never leaves, held or scheduled', async () => {
    const sending = await sendingDomain('rsa-sha256');
    const held = await addMessage(sending.token, {
      message_sender: `held@${sending.domain}`,
      to: ['nobody@example.net'],
      content: { kind: 'text_only', text: 'never' },
      scheduling: { mode: 'manual-wait' },
    });
    const sendAt = Date.now() + 5_000;
    const scheduled = await addMessage(sending.token, {
      message_sender: `held@${sending.domain}`,
      to: ['nobody@example.net'],
      content: { kind: 'text_only', text: 'never either' },
      scheduling: { mode: 'scheduled', send_at: new Date(sendAt).toISOString() },
    });
    for (const { uuid } of [held, scheduled]) {
      const cancelled = await addMessage(sending.token, {
        message_sender: `held@${sending.domain}`,
        scheduling: { mode: 'manual-cancel', message_uuid: uuid },
      });
      assert.deepEqual(cancelled, { uuid, status: 'cancelled' });
    }
    // Past the scheduled send_at, with the dispatcher having run, and the sender having taken what
    // the queue held then (a message sent after the run is delivered): still cancelled, nothing sent.
    await vi.waitFor(() => assert.ok(Date.now() > sendAt, 'past send_at'), {
      timeout: 10_000,
      interval: 100,
    });
    await runDispatcher();
    const after = await addMessage(sending.token, {
      message_sender: `after@${sending.domain}`,
      to: ['ok@recipient.test'],
      content: { kind: 'text_only', text: 'after the run' },
    });
    assert.equal((await waitForStatus(sending.token, after.uuid, settled)).status, 'delivered');
    for (const { uuid } of [held, scheduled]) {
      assert.equal((await queryMessage(sending.token, uuid)).status, 'cancelled');
      assert.equal(smtpTransactions(uuid).length, 0);
      assert.equal(outboxEml(uuid), undefined);
    }
  });
});
