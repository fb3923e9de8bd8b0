import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { setReceiving } from '../../shared/domains/registry.ts';
import { getInbound } from '../../shared/inbound/store/inbound.ts';
import { s3, sqs } from '../../shared/platform/aws/clients.ts';
import { outboxEml, waitForMessage } from '../support/delivery.ts';
import { call, mintToken, uniqueDomain } from '../support/host.ts';
import {
  type InboundSummary,
  inboundDetails,
  receivingAccount,
  senderDomain,
  sendInbound,
  waitForInbound,
} from '../support/inbound.ts';
import { add, newAccount, type TestAccount, textMessage } from '../support/messages.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Inbound mail end to end (docs/inbound.md): real SMTP to the local host's inbound mail server,
 * the raw message stored in the S3 emulator, SES's receipt on the inbound queue, the inbound
 * function parsing it, the item in DynamoDB Local, the webhook from the table stream, and the
 * routes reading it back. SPF, DKIM and DMARC are checked against the test DNS server.
 */
let who: TestAccount;
let receiver: WebhookReceiver;
let secret: string;

const get = async (url: string) => {
  const response = await fetch(url);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
};

beforeAll(async () => {
  who = await receivingAccount('in');
  receiver = await startWebhookReceiver();
  const added = await call<{ data: { webhook: { secret: string } } }>('POST', '/webhook/add-1.0', {
    token: who.token,
    body: { url: `${receiver.url}/inbound`, events: ['inbound.received'] },
  });
  assert.equal(added.status, 200, added.text);
  secret = added.body.data.webhook.secret;
});

afterAll(async () => {
  await receiver?.close();
});

/** Waits until the inbound queue has nothing left, visible or in flight: every receipt was handled. */
async function inboundQueueDrained(): Promise<void> {
  await vi.waitFor(
    async () => {
      const { Attributes } = await sqs().send(
        new GetQueueAttributesCommand({
          QueueUrl: String(process.env.INBOUND_QUEUE_URL),
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      assert.deepEqual(
        [Attributes?.ApproximateNumberOfMessages, Attributes?.ApproximateNumberOfMessagesNotVisible],
        ['0', '0'],
        'the inbound queue did not drain',
      );
    },
    { timeout: 60_000, interval: 200 },
  );
}

describe('inbound mail over SMTP', () => {
  it('stores a plain message with SPF, DKIM and DMARC verdicts, and announces it signed, metadata only', async () => {
    const sender = senderDomain();
    const to = `help@${who.domain}`;
    const sent = await sendInbound(
      {
        from: `Ada Lovelace <ada@${sender.domain}>`,
        to,
        subject: 'Where is my order?',
        text: 'Hello,\n\nmy order 42 has not arrived.\n\nAda',
        messageId: `<plain-${Date.now()}@${sender.domain}>`,
      },
      { dkim: sender },
    );
    assert.ok(sent.ok, sent.response);
    assert.match(sent.response, /^250 /);

    const [summary] = await waitForInbound(who, to);
    const message = await inboundDetails(who, (summary as InboundSummary).inbound_uuid);
    assert.deepEqual(message.from, { email: `ada@${sender.domain}`, name: 'Ada Lovelace' });
    assert.deepEqual(message.to, [{ email: to, name: null }]);
    assert.equal(message.recipient, to);
    assert.equal(message.subject, 'Where is my order?');
    assert.equal(message.text?.trim(), 'Hello,\n\nmy order 42 has not arrived.\n\nAda');
    assert.equal(message.html, null);
    assert.deepEqual(message.auth, { spf: 'pass', dkim: 'pass', dmarc: 'pass' });
    assert.deepEqual(message.spam, { verdict: 'not_scanned' });
    assert.equal(message.mailbox_hash, null);
    assert.equal(message.reply_to_message_uuid, null);
    assert.equal(message.parse_error, null);
    assert.match(message.received_at as string, /[+-]\d{2}:\d{2}$/);
    assert.ok(
      message.headers.some((header) => header.name === 'Subject' && header.value === 'Where is my order?'),
    );
    // The raw message exactly as received, behind a time-limited URL, with the receiving side's trace.
    const raw = await get(message.raw_url);
    assert.equal(raw.status, 200);
    assert.match(raw.bytes.toString('utf8'), /^Return-Path: <ada@sender-/);
    assert.match(
      raw.bytes.toString('utf8'),
      /Authentication-Results: inbound-smtp\.local\.test;[\s\S]*dkim=pass/,
    );

    const [delivery] = await receiver
      .waitFor((list) =>
        list.some((entry) => JSON.parse(entry.body).data.inbound_uuid === message.inbound_uuid),
      )
      .then((list) =>
        list.filter((entry) => JSON.parse(entry.body).data.inbound_uuid === message.inbound_uuid),
      );
    assert.ok(delivery);
    // Signed as every event is (Standard Webhooks, the library's own check).
    const verified = new Webhook(secret.replace(/^whsec_/, '')).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    }) as { type: string; timestamp: string; data: Record<string, unknown> };
    assert.equal(verified.type, 'inbound.received');
    assert.equal(verified.data.inbound_uuid, message.inbound_uuid);
    assert.equal(verified.data.subject, 'Where is my order?');
    for (const body of ['text', 'html', 'stripped_text_reply', 'headers', 'raw_url'])
      assert.ok(!(body in verified.data), `the event carries ${body}`);
  });

  it('a receipt processed twice (queues deliver at least once) stores and announces the message once', async () => {
    const to = `twice@${who.domain}`;
    assert.ok((await sendInbound({ from: 'ada@customer.test', to, subject: 'Twice', text: 'once' })).ok);
    const [summary] = await waitForInbound(who, to);
    const uuid = (summary as InboundSummary).inbound_uuid;
    await receiver.waitFor((list) => list.some((entry) => JSON.parse(entry.body).data.inbound_uuid === uuid));
    const item = await getInbound(uuid);
    assert.ok(item);
    // SES's receipt for the same stored message, delivered again.
    const queueUrl = String(process.env.INBOUND_QUEUE_URL);
    await sqs().send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({
          notificationType: 'Received',
          mail: { timestamp: item.received_at, source: 'ada@customer.test', messageId: item.ses_message_id },
          receipt: {
            timestamp: item.received_at,
            recipients: [to],
            action: { type: 'S3', bucketName: process.env.BUCKET_NAME, objectKey: item.objects.raw },
          },
        }),
      }),
    );
    await inboundQueueDrained();
    assert.deepEqual(
      (await waitForInbound(who, to)).map((entry) => entry.inbound_uuid),
      [uuid],
    );
    assert.deepEqual(await getInbound(uuid), item, 'the item was not written again');
    const ids = new Set(
      receiver.received
        .filter((entry) => JSON.parse(entry.body).data.inbound_uuid === uuid)
        .map((entry) => entry.headers['webhook-id']),
    );
    assert.equal(ids.size, 1, 'one event');
  });

  it('parses multipart mail with HTML and two attachments, each downloadable', async () => {
    const to = `files@${who.domain}`;
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(30_000, 7)]);
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    const sent = await sendInbound({
      // Only the receiving address: elsewhere.test does not receive here and would be refused.
      envelope: { from: 'grace@files-sender.test', to: [to] },
      from: 'Grace <grace@files-sender.test>',
      to,
      cc: 'Linus <linus@elsewhere.test>',
      subject: 'Two files',
      text: 'See the two files.',
      html: '<p>See the <b>two</b> files.</p>',
      attachments: [
        { filename: 'report.pdf', content: pdf, contentType: 'application/pdf' },
        { filename: 'pixel.png', content: png, contentType: 'image/png' },
      ],
    });
    assert.ok(sent.ok, sent.response);
    const [summary] = await waitForInbound(who, to);
    assert.deepEqual((summary as InboundSummary).attachments, [
      { filename: 'report.pdf', content_type: 'application/pdf', size: pdf.length },
      { filename: 'pixel.png', content_type: 'image/png', size: png.length },
    ]);
    const message = await inboundDetails(who, (summary as InboundSummary).inbound_uuid);
    assert.equal(message.text?.trim(), 'See the two files.');
    assert.match(message.html ?? '', /<p>See the <b>two<\/b> files\.<\/p>/);
    assert.deepEqual(message.cc, [{ email: 'linus@elsewhere.test', name: 'Linus' }]);
    // No DNS records for this sender: nothing to check, so neither pass nor fail.
    assert.deepEqual(message.auth, { spf: 'none', dkim: 'none', dmarc: 'none' });
    const [first, second] = message.attachments;
    const pdfDownload = await get(first?.url as string);
    assert.equal(pdfDownload.status, 200);
    assert.equal(pdfDownload.type, 'application/pdf');
    assert.ok(pdfDownload.bytes.equals(pdf), 'the PDF comes back byte for byte');
    assert.ok((await get(second?.url as string)).bytes.equals(png), 'the PNG comes back byte for byte');
  });

  it('decodes non-UTF-8 charsets in the subject, names and bodies', async () => {
    const to = `charsets@${who.domain}`;
    const latin1 = Buffer.from('Grüße aus Köln, café à 5 francs?', 'latin1');
    const raw = Buffer.concat([
      Buffer.from(
        [
          'From: =?ISO-8859-1?Q?J=FCrgen_M=FCller?= <jurgen@charsets-sender.test>',
          `To: ${to}`,
          'Subject: =?KOI8-R?B?8NLJ18XU?= =?ISO-8859-1?Q?_und_Gr=FC=DFe?=',
          'Message-ID: <charsets@charsets-sender.test>',
          'MIME-Version: 1.0',
          'Content-Type: multipart/alternative; boundary="b1"',
          '',
          '--b1',
          'Content-Type: text/plain; charset=ISO-8859-1',
          'Content-Transfer-Encoding: 8bit',
          '',
          '',
        ].join('\r\n'),
      ),
      latin1,
      Buffer.from(
        [
          '',
          '--b1',
          'Content-Type: text/html; charset=windows-1251',
          'Content-Transfer-Encoding: quoted-printable',
          '',
          '<p>=CF=F0=E8=E2=E5=F2</p>',
          '--b1--',
          '',
        ].join('\r\n'),
      ),
    ]);
    const sent = await sendInbound({ envelope: { from: 'jurgen@charsets-sender.test', to: [to] }, raw });
    assert.ok(sent.ok, sent.response);
    const [summary] = await waitForInbound(who, to);
    const message = await inboundDetails(who, (summary as InboundSummary).inbound_uuid);
    assert.equal(message.subject, 'Привет und Grüße');
    assert.deepEqual(message.from, { email: 'jurgen@charsets-sender.test', name: 'Jürgen Müller' });
    assert.equal(message.text?.trim(), 'Grüße aus Köln, café à 5 francs?');
    assert.match(message.html ?? '', /<p>Привет<\/p>/);
  });

  it('links a reply to the account’s own sent message, and strips the quoted text', async () => {
    // A message this account sent, delivered by the local host's recipient MTA.
    const added = await add(
      who,
      textMessage(who, { to: ['Ada <ada@customer.test>'], subject: 'Your order 42' }),
    );
    assert.equal(added.status, 200, added.text);
    const sentUuid = (added.body as { data: { message_uuid: string } }).data.message_uuid;
    await waitForMessage(sentUuid, (message) => message.status === 'delivered');
    const eml = outboxEml(sentUuid)?.toString('utf8') ?? '';
    const sentMessageId = /^Message-ID:\s*(<[^>]+>)/im.exec(eml)?.[1];
    assert.equal(sentMessageId, `<${sentUuid}@${who.domain}>`);

    // Another account's message in the References too: never linked.
    const other = await newAccount('other');
    const foreign = await add(other, textMessage(other));
    const foreignUuid = (foreign.body as { data: { message_uuid: string } }).data.message_uuid;

    const to = `orders@${who.domain}`;
    const sent = await sendInbound({
      from: 'Ada <ada@customer.test>',
      to,
      subject: 'Re: Your order 42',
      inReplyTo: sentMessageId,
      references: [`<${foreignUuid}@${other.domain}>`, sentMessageId as string],
      text: [
        'Yes, please ship it to the new address.',
        '',
        `On Sun, Nov 22, 2026 at 9:15 AM Shop <${who.sender}> wrote:`,
        '',
        '> Your order 42 is ready.',
        '> Reply to confirm the address.',
        '',
      ].join('\n'),
    });
    assert.ok(sent.ok, sent.response);
    const [summary] = await waitForInbound(who, to);
    assert.equal((summary as InboundSummary).reply_to_message_uuid, sentUuid);
    const message = await inboundDetails(who, (summary as InboundSummary).inbound_uuid);
    assert.equal(message.in_reply_to, sentMessageId);
    assert.equal(message.stripped_text_reply, 'Yes, please ship it to the new address.');

    // Only the foreign message referenced: no link.
    const lonely = `lonely@${who.domain}`;
    await sendInbound({
      from: 'Eve <eve@customer.test>',
      to: lonely,
      subject: 'Re: not yours',
      inReplyTo: `<${foreignUuid}@${other.domain}>`,
      text: 'Hi',
    });
    const [unlinked] = await waitForInbound(who, lonely);
    assert.equal((unlinked as InboundSummary).reply_to_message_uuid, null);
  });

  it('parses the mailbox hash of plus-addressing and lists by exact recipient', async () => {
    const to = `support+ticket-42@${who.domain}`;
    const sent = await sendInbound({
      from: 'ada@customer.test',
      to,
      subject: 'Ticket 42',
      text: 'More details.',
    });
    assert.ok(sent.ok, sent.response);
    const [summary] = await waitForInbound(who, to);
    assert.equal((summary as InboundSummary).mailbox_hash, 'ticket-42');
    assert.equal((summary as InboundSummary).recipient, to);
    // Upper case in the filter: addresses compare case-insensitively.
    const other = await call<{ data: { inbound: InboundSummary[] } }>('POST', '/inbound/query-1.0', {
      token: who.token,
      body: { filters: { recipient: `SUPPORT+ticket-42@${who.domain.toUpperCase()}` } },
    });
    assert.deepEqual(
      other.body.data.inbound.map((entry) => entry.inbound_uuid),
      [(summary as InboundSummary).inbound_uuid],
    );
  });

  it('reports a forged DKIM signature as fail', async () => {
    const sender = senderDomain();
    const impostor = senderDomain();
    // Signed with another domain's key under this domain's selector: the published key does not verify it.
    const sent = await sendInbound(
      {
        from: `Bank <alerts@${sender.domain}>`,
        to: `security@${who.domain}`,
        subject: 'Verify your account',
        text: 'Click here.',
      },
      { dkim: { ...impostor, domain: sender.domain } },
    );
    assert.ok(sent.ok, sent.response);
    const [summary] = await waitForInbound(who, `security@${who.domain}`);
    assert.equal((summary as InboundSummary).auth.dkim, 'fail');
    // SPF still passes (the envelope comes from an allowed address); DMARC has no aligned DKIM pass
    // but SPF aligns, so it passes on SPF.
    assert.equal((summary as InboundSummary).auth.spf, 'pass');
  });

  it('keeps a message that cannot be parsed raw, with a parse error, and still announces it', async () => {
    const to = `junk@${who.domain}`;
    const raw = Buffer.from('this is not a header\r\nnor is this one\r\n\r\nand some body\r\n');
    const sent = await sendInbound({ envelope: { from: 'junk@junk-sender.test', to: [to] }, raw });
    assert.ok(sent.ok, sent.response);
    const [summary] = await waitForInbound(who, to);
    assert.match(
      String((summary as InboundSummary).parse_error),
      /not RFC 5322: line \d+ is not "Name: value"/,
    );
    const message = await inboundDetails(who, (summary as InboundSummary).inbound_uuid);
    assert.equal(message.text, null);
    assert.deepEqual(message.attachments, []);
    const stored = await get(message.raw_url);
    assert.ok(stored.bytes.toString('utf8').endsWith(raw.toString('utf8')), 'the raw message is kept whole');
    await receiver.waitFor((list) =>
      list.some((entry) => JSON.parse(entry.body).data.inbound_uuid === message.inbound_uuid),
    );
  });

  it('stores a 15 MB message whole (the raw message and the attachment go up in parts)', async () => {
    const to = `large@${who.domain}`;
    const large = Buffer.alloc(11 * 1024 * 1024);
    for (let index = 0; index < large.length; index += 4) large.writeUInt32LE(index, index);
    const sent = await sendInbound({
      envelope: { from: 'large@large-sender.test', to: [to] },
      from: 'large@large-sender.test',
      to,
      subject: 'Large',
      text: 'The file is attached.',
      attachments: [{ filename: 'large.bin', content: large }],
    });
    assert.ok(sent.ok, sent.response);
    const [summary] = await waitForInbound(who, to);
    const message = await inboundDetails(who, (summary as InboundSummary).inbound_uuid);
    assert.ok((message.size as number) > 15 * 1024 * 1024, String(message.size));
    assert.equal(message.attachments[0]?.size, large.length);
    assert.ok((await get(message.attachments[0]?.url as string)).bytes.equals(large), 'byte for byte');
  });

  it('refuses mail over 40 MB', async () => {
    const sent = await sendInbound({
      from: 'big@big-sender.test',
      to: `big@${who.domain}`,
      subject: 'Too big',
      text: 'x',
      attachments: [{ filename: 'big.bin', content: Buffer.alloc(31 * 1024 * 1024, 1) }],
    });
    assert.equal(sent.ok, false);
    assert.equal(sent.responseCode, 552, sent.response);
    assert.match(sent.response, /size/i);
  });

  it('refuses with 550 mail for a domain that does not receive, or is not registered', async () => {
    const notReceiving = await newAccount('off');
    const offDomain = await sent550(`someone@${notReceiving.domain}`);
    assert.equal(offDomain.responseCode, 550, offDomain.response);
    assert.match(offDomain.response, /^550 5\.1\.1 /);
    const unknown = await sent550(`someone@${uniqueDomain('nobody')}`);
    assert.equal(unknown.responseCode, 550, unknown.response);
    // Turned off again: refused again.
    const toggled = await receivingAccount('toggle');
    await setReceiving(toggled.domain, false);
    assert.equal((await sent550(`x@${toggled.domain}`)).responseCode, 550);
  });

  it('stores nothing for a receipt whose recipients’ domains do not receive here (the AWS rule takes every verified domain)', async () => {
    // On AWS the receipt rule has no recipient list: SES stores mail for any domain it verified in the
    // account and region, and the inbound function decides from the table.
    const off = await newAccount('rule-off');
    const raw = `inbound/raw/${randomUUID()}`;
    await s3().send(
      new PutObjectCommand({
        Bucket: process.env.BUCKET_NAME,
        Key: raw,
        Body: 'From: ada@customer.test\r\nTo: x@off\r\nSubject: Not here\r\n\r\nbody\r\n',
      }),
    );
    const recipients = [`x@${off.domain}`, `y@${uniqueDomain('unregistered')}`];
    await sqs().send(
      new SendMessageCommand({
        QueueUrl: String(process.env.INBOUND_QUEUE_URL),
        MessageBody: JSON.stringify({
          notificationType: 'Received',
          mail: { timestamp: new Date().toISOString(), source: 'ada@customer.test', messageId: randomUUID() },
          receipt: {
            timestamp: new Date().toISOString(),
            recipients,
            action: { type: 'S3', bucketName: process.env.BUCKET_NAME, objectKey: raw },
          },
        }),
      }),
    );
    await inboundQueueDrained();
    const page = await call<{ data: { inbound: unknown[] } }>('POST', '/inbound/query-1.0', {
      token: off.token,
      body: {},
    });
    assert.equal(page.status, 200, page.text);
    assert.deepEqual(page.body.data.inbound, [], 'nothing stored for a domain whose receiving is off');
    // Turned on in the table, the next receipt for the same domain is stored: no redeploy.
    await setReceiving(off.domain, true);
    assert.ok(
      (await sendInbound({ from: 'ada@customer.test', to: recipients[0], subject: 'Now', text: 'on' })).ok,
    );
    assert.equal((await waitForInbound(off, recipients[0] as string)).length, 1);
  });

  it('answers 112 for another account’s or an unknown inbound_uuid, on query and delete', async () => {
    const to = `mine@${who.domain}`;
    await sendInbound({ from: 'a@customer.test', to, subject: 'mine', text: 'mine' });
    const [summary] = await waitForInbound(who, to);
    const uuid = (summary as InboundSummary).inbound_uuid;
    const stranger = await mintToken({ account: 'stranger-account' });
    for (const path of ['/inbound/query-1.0', '/inbound/delete-1.0']) {
      for (const inbound_uuid of [uuid, '00000000-0000-4000-8000-000000000000']) {
        const answer = await call<{ error: { code: number } }>('POST', path, {
          token: stranger,
          body: { inbound_uuid },
        });
        assert.equal(answer.status, 404, `${path}: ${answer.text}`);
        assert.equal(answer.body.error.code, 112);
      }
    }
    // Still there for its owner, then deleted with its objects.
    const message = await inboundDetails(who, uuid);
    const deleted = await call('POST', '/inbound/delete-1.0', {
      token: who.token,
      body: { inbound_uuid: uuid },
    });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, { data: { inbound_uuid: uuid, deleted: true } });
    const gone = await call<{ error: { code: number } }>('POST', '/inbound/query-1.0', {
      token: who.token,
      body: { inbound_uuid: uuid },
    });
    assert.equal(gone.body.error.code, 112);
    assert.equal((await get(message.raw_url)).status, 404, 'the raw object is deleted too');
  });
});

async function sent550(to: string) {
  const outcome = await sendInbound({ from: 'a@customer.test', to, subject: 'x', text: 'x' });
  assert.equal(outcome.ok, false);
  return outcome;
}
