import assert from 'node:assert/strict';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import PostalMime from 'postal-mime';
import { describe, test } from 'vitest';
import { signedFieldNames } from '../../shared/delivery/mail/dkim-signer.ts';
import { dynamo } from '../../shared/platform/aws/clients.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { keys } from '../../shared/platform/table/keys.ts';
import {
  addMessage,
  outboxEml,
  outboxEnvelope,
  type SendingDomain,
  sendingDomain,
  verifyDkim,
  waitForStatus,
} from '../support/delivery.ts';
import { call, useHostEnvironment } from '../support/host.ts';

/**
 * Mail that lands in the inbox, checked on what the local recipient MTA received: oversigned and
 * dual DKIM signatures verified by mailauth against the test DNS server, complete MIME parsed by
 * postal-mime, the EML rules, the envelope and Feedback-ID, and the DKIM key lifecycle behind them.
 */
useHostEnvironment();

const settled = ['delivered', 'bounced', 'failed'];

/**
 * A text body in one form for comparison. MIME's canonical line break is CRLF (RFC 2045 6.8):
 * the composer sends the text that way, and postal-mime returns CRLF from a base64 part and LF from
 * a quoted-printable one, plus, for the latter, the line break before the boundary (which belongs to
 * the boundary, RFC 2046 5.1.1). Everything else must be identical.
 */
const sameLines = (text: string | undefined) => (text ?? '').replace(/\r\n/g, '\n').replace(/\n+$/, '');
const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64');

async function deliver(
  sending: SendingDomain,
  body: Record<string, unknown>,
): Promise<{ uuid: string; eml: Buffer }> {
  const { uuid } = await addMessage(sending.token, body);
  const message = await waitForStatus(sending.token, uuid, settled);
  assert.equal(message.status, 'delivered', JSON.stringify(message.status_history));
  const eml = outboxEml(uuid);
  assert.ok(eml, 'the recipient MTA wrote the message');
  return { uuid, eml };
}

function headerSection(eml: Buffer): string {
  const text = eml.toString('latin1');
  return text.slice(0, text.indexOf('\r\n\r\n'));
}

function signatureHeaders(eml: Buffer): string[] {
  return headerSection(eml)
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')
    .filter((line) => /^dkim-signature:/i.test(line));
}

/** The message with one more header field, added above the others (where a relay adds its own). */
const withHeaderOnTop = (eml: Buffer, field: string) => Buffer.concat([Buffer.from(`${field}\r\n`), eml]);

/** The message with one more header field, added at the end of the header section. */
function withHeaderAtEnd(eml: Buffer, field: string): Buffer {
  const text = eml.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  return Buffer.from(`${text.slice(0, end)}\r\n${field}${text.slice(end)}`, 'latin1');
}

describe('oversigned DKIM on delivered mail', () => {
  test('h= lists From twice; adding From, Reply-To, Subject or List-Unsubscribe breaks verification', async () => {
    const sending = await sendingDomain('rsa-sha256');
    const { uuid, eml } = await deliver(sending, {
      message_sender: `billing@${sending.domain}`,
      from: [{ email: `billing@${sending.domain}`, name: 'Billing' }],
      to: ['reader@example.net'],
      bcc: ['audit@example.net'],
      subject: 'Invoice 1042',
      headers: { 'X-Campaign': 'invoices' },
      content: { kind: 'text_only', text: 'Please pay invoice 1042 to the usual account.' },
    });
    const [signature, ...others] = signatureHeaders(eml);
    assert.equal(others.length, 0, 'an RSA domain signs once');
    const names = signedFieldNames(signature ?? '');
    assert.equal(names.filter((name) => name === 'from').length, 2, signature);
    for (const name of ['reply-to', 'list-unsubscribe', 'list-unsubscribe-post', 'cc']) {
      assert.equal(names.filter((entry) => entry === name).length, 1, `${name} (absent) is listed once`);
    }
    for (const name of ['to', 'subject', 'date', 'message-id', 'mime-version', 'content-type']) {
      assert.equal(names.filter((entry) => entry === name).length, 2, `${name} (present) is listed twice`);
    }
    assert.ok(names.includes('feedback-id'), 'Feedback-ID is signed');
    assert.equal((await verifyDkim(eml))[0]?.result, 'pass');

    for (const field of [
      `From: Billing <billing@${sending.domain}>`,
      'From: Attacker <ceo@evil.test>',
      'Reply-To: pay-here@evil.test',
      'Subject: Updated bank details',
      'List-Unsubscribe: <https://evil.test/unsubscribe>',
    ]) {
      for (const tampered of [withHeaderOnTop(eml, field), withHeaderAtEnd(eml, field)]) {
        const result = (await verifyDkim(tampered))[0]?.result;
        assert.notEqual(result, 'pass', `still verifies after adding "${field}"`);
      }
    }

    // The envelope (recorded beside the message) and the feedback identifier.
    const envelope = outboxEnvelope(uuid);
    assert.equal(envelope?.mail_from, `${uuid}@bounce.${sending.domain}`);
    assert.deepEqual(envelope?.recipients, ['reader@example.net', 'audit@example.net']);
    const parsed = await PostalMime.parse(eml);
    const header = (name: string) => parsed.headers.find((entry) => entry.key === name)?.value;
    // The account is an opaque, stable tag (docs/deliverability.md): never the account id itself.
    const feedback = header('feedback-id') ?? '';
    assert.match(feedback, new RegExp(`^${uuid}:a[a-z2-7]{20}:${sending.domain.replace(/\./g, '\\.')}:svc$`));
    assert.ok(!feedback.includes(sending.account), feedback);
    assert.equal(header('x-campaign'), 'invoices');
  });

  test('an Ed25519 domain signs with Ed25519 and RSA-2048, and both signatures verify', async () => {
    const sending = await sendingDomain('ed25519-sha256');
    const { eml } = await deliver(sending, {
      message_sender: `news@${sending.domain}`,
      to: ['reader@example.net'],
      subject: 'Two signatures',
      headers: {
        'List-Unsubscribe': `<mailto:unsubscribe@${sending.domain}>, <https://${sending.domain}/u/1>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
      content: { kind: 'text_only', text: 'Signed twice.' },
    });
    const signatures = signatureHeaders(eml);
    assert.equal(signatures.length, 2);
    assert.match(signatures[0] ?? '', /a=ed25519-sha256/);
    assert.match(signatures[1] ?? '', /a=rsa-sha256/);
    const results = await verifyDkim(eml);
    assert.deepEqual(
      results.map((entry) => [entry.algorithm, entry.result, entry.domain]),
      [
        ['ed25519-sha256', 'pass', sending.domain],
        ['rsa-sha256', 'pass', sending.domain],
      ],
    );
    for (const signature of signatures) {
      const names = signedFieldNames(signature);
      assert.equal(names.filter((name) => name === 'list-unsubscribe').length, 2);
      assert.equal(names.filter((name) => name === 'list-unsubscribe-post').length, 2);
    }
    // A second List-Unsubscribe breaks both signatures.
    const tampered = await verifyDkim(withHeaderOnTop(eml, 'List-Unsubscribe: <https://evil.test/u>'));
    assert.ok(
      tampered.every((entry) => entry.result !== 'pass'),
      JSON.stringify(tampered),
    );
  });
});

describe('complete MIME on delivered mail', () => {
  test('HTML-only content arrives as multipart/alternative with a meaningful text part', async () => {
    const sending = await sendingDomain('rsa-sha256');
    const html =
      '<h1>Your order has shipped</h1><p>Hello Ann, order <b>1042</b> left our warehouse today.</p>' +
      '<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Teapot</td><td>1</td></tr></table>' +
      `<p><a href="https://${sending.domain}/track/1042">Track the parcel</a></p>`;
    const { eml } = await deliver(sending, {
      message_sender: `shop@${sending.domain}`,
      to: ['ann@example.net'],
      subject: 'Shipped',
      content: { kind: 'html_only', html },
    });
    const head = headerSection(eml);
    assert.match(head, /^Content-Type: multipart\/alternative;/im);
    const raw = eml.toString('latin1');
    assert.match(raw, /^Content-Type: text\/plain; charset=utf-8/im);
    assert.match(raw, /^Content-Type: text\/html; charset=utf-8/im);
    const parsed = await PostalMime.parse(eml);
    const text = parsed.text ?? '';
    assert.match(text, /Your order has shipped/);
    assert.match(text, /Hello Ann, order 1042 left our warehouse today\./);
    assert.match(text, /Teapot\s+1/);
    assert.match(
      text,
      new RegExp(`Track the parcel \\[https://${sending.domain.replace(/\./g, '\\.')}/track/1042\\]`),
    );
    assert.doesNotMatch(text, /<[a-z]/i, 'no markup in the text part');
    // The fragment became a complete UTF-8 document.
    assert.match(parsed.html ?? '', /^<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">/);
    assert.match(parsed.html ?? '', /<title>Shipped<\/title>/);
    assert.equal((await verifyDkim(eml))[0]?.result, 'pass');
  });

  test('non-ASCII subject, names, bodies and file names round-trip through postal-mime unchanged', async () => {
    const sending = await sendingDomain('ed25519-sha256');
    const subject = 'Rechnung für Jürgen — 請求書 №42 🎉, a subject long enough to be folded in the header';
    const text = 'Grüße aus Köln!\nΚαλημέρα, 你好, Привет.\nSumme: 12,50 €\n';
    const html = '<p>Grüße aus Köln! Καλημέρα, 你好, Привет. Summe: <b>12,50 €</b></p>';
    const csv = 'Artikel;Preis\nTeekanne groß;12,50 €\n';
    const { eml } = await deliver(sending, {
      message_sender: `rechnung@${sending.domain}`,
      from: [{ email: `rechnung@${sending.domain}`, name: 'Zoë Ünal — 店舗' }],
      to: [{ email: 'juergen@example.net', name: 'Jürgen Größ' }],
      cc: [{ email: 'olga@example.net', name: 'Ольга Петрова' }],
      reply_to: [{ email: `hilfe@${sending.domain}`, name: 'Kundendienst Ärger & Co' }],
      subject,
      content: { kind: 'mixed', text, html },
      attachments: [
        { filename: 'Rechnung März 2026 — Köln.csv', content_type: 'text/csv', content: b64(csv) },
        { filename: '請求書 2026.pdf', content_type: 'application/pdf', content: b64('%PDF-1.4 fake') },
      ],
    });
    assert.ok(
      Buffer.from(headerSection(eml), 'latin1').every((byte) => byte < 0x80),
      'the header section is 7-bit ASCII (RFC 2047/2231)',
    );
    const parsed = await PostalMime.parse(eml);
    assert.equal(parsed.subject, subject);
    assert.deepEqual(parsed.from, { address: `rechnung@${sending.domain}`, name: 'Zoë Ünal — 店舗' });
    assert.deepEqual(parsed.to, [{ address: 'juergen@example.net', name: 'Jürgen Größ' }]);
    assert.deepEqual(parsed.cc, [{ address: 'olga@example.net', name: 'Ольга Петрова' }]);
    assert.deepEqual(parsed.replyTo, [
      { address: `hilfe@${sending.domain}`, name: 'Kundendienst Ärger & Co' },
    ]);
    assert.equal(sameLines(parsed.text), sameLines(text));
    assert.match(
      parsed.html ?? '',
      /<p>Grüße aus Köln! Καλημέρα, 你好, Привет\. Summe: <b>12,50 €<\/b><\/p>/,
    );
    assert.deepEqual(
      parsed.attachments.map((attachment) => [attachment.filename, attachment.mimeType]),
      [
        ['Rechnung März 2026 — Köln.csv', 'text/csv'],
        ['請求書 2026.pdf', 'application/pdf'],
      ],
    );
    assert.equal(Buffer.from(parsed.attachments[0]?.content as ArrayBuffer).toString('utf8'), csv);
    assert.match(eml.toString('latin1'), /^Content-Type: text\/csv; charset=utf-8/im);
    const results = await verifyDkim(eml);
    assert.deepEqual(
      results.map((entry) => entry.result),
      ['pass', 'pass'],
    );
  });
});

describe('EML pass-through', () => {
  test('Date and Message-ID are added when missing; every other header stays as given, then is signed', async () => {
    const sending = await sendingDomain('rsa-sha256');
    const head = [
      `From: Ops <ops@${sending.domain}>`,
      'To: reader@example.net',
      'Subject:   Spacing   kept',
      'X-Ticket:  #4711',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
    ];
    const { uuid, eml } = await deliver(sending, {
      message_sender: `ops@${sending.domain}`,
      to: ['reader@example.net'],
      content: { kind: 'eml', eml: b64(`${head.join('\r\n')}\r\n\r\nAs written.\r\n`) },
    });
    const received = headerSection(eml);
    for (const line of head)
      assert.ok(received.includes(`\r\n${line}\r\n`) || received.endsWith(`\r\n${line}`), line);
    const date = received.match(/^Date: (.+)$/im)?.[1];
    assert.ok(date !== undefined, 'a Date was added');
    assert.ok(Math.abs(Date.parse(date) - Date.now()) < 60 * 60 * 1000, date);
    assert.match(
      received,
      new RegExp(`^Message-ID: <${uuid}@${sending.domain.replace(/\./g, '\\.')}>$`, 'im'),
    );
    assert.match(received, new RegExp(`^Feedback-ID: ${uuid}:`, 'im'));
    const names = signedFieldNames(signatureHeaders(eml)[0] ?? '');
    assert.equal(names.filter((name) => name === 'from').length, 2);
    assert.equal((await verifyDkim(eml))[0]?.result, 'pass');
  });

  test('a Date more than an hour off is replaced by the time of sending; a Message-ID is kept', async () => {
    const sending = await sendingDomain('rsa-sha256');
    const { eml } = await deliver(sending, {
      message_sender: `ops@${sending.domain}`,
      to: ['reader@example.net'],
      content: {
        kind: 'eml',
        eml: b64(
          [
            `From: ops@${sending.domain}`,
            'To: reader@example.net',
            'Date: Thu, 01 Jan 2015 08:00:00 +0000',
            `Message-ID: <own-id-1@${sending.domain}>`,
            'Subject: Old date',
            '',
            'Body.',
            '',
          ].join('\r\n'),
        ),
      },
    });
    const received = headerSection(eml);
    assert.doesNotMatch(received, /2015/);
    const date = received.match(/^Date: (.+)$/im)?.[1] ?? '';
    assert.ok(Math.abs(Date.parse(date) - Date.now()) < 60 * 60 * 1000, date);
    assert.equal(received.match(/^Message-ID:/gim)?.length, 1);
    assert.match(received, /^Message-ID: <own-id-1@/im);
    assert.equal((await verifyDkim(eml))[0]?.result, 'pass');
  });
});

describe('DKIM keys behind the signatures', () => {
  test('status lists both active records of an Ed25519 domain; rotation rotates both; expired keys are pruned', async () => {
    const sending = await sendingDomain('ed25519-sha256');
    const status = async () =>
      (
        await call('GET', '/domain/dkim/status-1.0', {
          token: sending.token,
          query: { domain: sending.domain },
        })
      ).body.data;
    const first = await status();
    const active = (data: any) =>
      data.dkim_keys
        .filter((key: { status: string }) => key.status === 'active')
        .map((key: any) => key.algorithm);
    assert.deepEqual(active(first), ['ed25519-sha256', 'rsa-sha256']);
    // sendingDomain published both records.
    assert.equal(first.svc_config.dkim_dns_status, 'verified');
    for (const key of first.dkim_keys) {
      assert.deepEqual(
        Object.keys(key).sort(),
        [
          'algorithm',
          'created_at',
          'dns_name',
          'dns_type',
          'dns_value',
          'dns_value_chunks',
          'selector',
          'status',
          ...(key.status === 'retired' ? ['retired_at'] : []),
        ].sort(),
      );
    }

    const rotated = await call('POST', '/domain/dkim/set-algorithm-1.0', {
      token: sending.token,
      body: { domain: sending.domain, algorithm: 'ed25519-sha256' },
    });
    assert.equal(rotated.status, 200, rotated.text);
    const second = await status();
    const previous = first.dkim_keys.filter((key: { status: string }) => key.status === 'active');
    const now = second.dkim_keys.filter((key: { status: string }) => key.status === 'active');
    assert.deepEqual(
      now.map((key: any) => key.algorithm),
      ['ed25519-sha256', 'rsa-sha256'],
    );
    for (const key of previous) {
      const listed = second.dkim_keys.find((candidate: any) => candidate.selector === key.selector);
      assert.equal(listed?.status, 'retired', `${key.algorithm} key retired by the rotation`);
      assert.ok(!now.some((candidate: any) => candidate.selector === key.selector));
    }
    assert.equal(second.svc_config.dkim_dns_status, 'pending', 'the new records are not published yet');

    // Age one retired key past its retention: it leaves the list at once, and the next rotation
    // deletes it from the table (DynamoDB's TTL does the same on AWS, on its own schedule).
    const aged = previous[0].selector;
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.dkimKey(sending.domain, aged),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 60 },
      }),
    );
    const third = await status();
    assert.ok(!third.dkim_keys.some((key: any) => key.selector === aged), 'an expired key is not listed');
    assert.equal(third.dkim_keys.length, second.dkim_keys.length - 1);
    const stored = await dynamo().send(
      new GetCommand({ TableName: tableName(), Key: keys.dkimKey(sending.domain, aged) }),
    );
    assert.ok(stored.Item, 'still stored until the next rotation or the TTL');
    assert.equal(typeof stored.Item.expires_at, 'number');

    await call('POST', '/domain/dkim/set-algorithm-1.0', {
      token: sending.token,
      body: { domain: sending.domain, algorithm: 'rsa-sha256' },
    });
    const gone = await dynamo().send(
      new GetCommand({ TableName: tableName(), Key: keys.dkimKey(sending.domain, aged) }),
    );
    assert.equal(gone.Item, undefined, 'the rotation pruned the expired key');
    const fourth = await status();
    assert.deepEqual(active(fourth), ['rsa-sha256']);
    // Retired keys carry their expiry: retirement + 30 days.
    const retired = await dynamo().send(
      new GetCommand({ TableName: tableName(), Key: keys.dkimKey(sending.domain, now[1].selector) }),
    );
    const retiredAt = Date.parse(String(retired.Item?.retired_at));
    assert.equal(retired.Item?.expires_at, Math.floor(retiredAt / 1000) + 30 * 86_400);
  });
});
