import assert from 'node:assert/strict';
import PostalMime from 'postal-mime';
import { describe, test } from 'vitest';
import {
  attachmentContentType,
  completeHtmlDocument,
  composeMime,
  headerValue,
  prepareEml,
  rfc5322Date,
} from '../../shared/delivery/mail/compose.ts';
import { signedFieldNames, signMessage } from '../../shared/delivery/mail/dkim-signer.ts';
import {
  accountTag,
  bounceAddress,
  feedbackId,
  mailFromDomain,
  parseMailFromSubdomain,
} from '../../shared/delivery/mail/envelope.ts';
import {
  combinedDnsStatus,
  companionAlgorithm,
  isExpiredKey,
  retiredKeyExpiry,
} from '../../shared/domains/dkim/model/dkim.ts';
import { testSigningKey, verifyDkimOffline } from '../support/dkim-offline.ts';

/** The rules of "mail that lands in the inbox" that need no server: MIME, EML, oversigning, keys. */

const base = {
  messageId: '<6f1c7a52-45a7-4a0e-9d44-8f1f4f1f2c3d@shop.test>',
  sender: 'orders@shop.test',
  from: [{ email: 'orders@shop.test', name: 'Shop' }],
  to: [{ email: 'ann@example.net' }],
  cc: [],
  replyTo: [],
  subject: 'Your order',
  attachments: [],
};

const ed = testSigningKey('ed25519-sha256', 'ed1');
const rsa = testSigningKey('rsa-sha256', 'rsa1');

async function dkimResults(raw: Buffer) {
  const verdicts = await verifyDkimOffline(raw, {
    'ed1._domainkey.shop.test': ed.txt,
    'rsa1._domainkey.shop.test': rsa.txt,
  });
  return verdicts.map((entry) => ({ result: entry.status.result, algorithm: entry.status.header?.a }));
}

/**
 * A text body in one form for comparison. MIME's canonical line break is CRLF (RFC 2045 6.8):
 * the composer sends the text that way, and postal-mime returns CRLF from a base64 part and LF from
 * a quoted-printable one, plus, for the latter, the line break before the boundary (which belongs to
 * the boundary, RFC 2046 5.1.1). Everything else must be identical.
 */
const sameLines = (text: string | undefined) => (text ?? '').replace(/\r\n/g, '\n').replace(/\n+$/, '');

const signatureHeaders = (raw: Buffer) => {
  const head = raw.toString('latin1').split(/\r\n\r\n/)[0] ?? '';
  return head
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')
    .filter((line) => /^dkim-signature:/i.test(line));
};

describe('oversigned DKIM signatures', () => {
  test('h= lists From twice and each oversigned field once more than the message has it', async () => {
    const raw = await composeMime({
      ...base,
      cc: [{ email: 'carl@example.net' }],
      headers: { 'List-Unsubscribe': '<mailto:unsubscribe@shop.test>' },
      text: 'hello',
    });
    const [signature] = signatureHeaders(await signMessage(raw, ed.key));
    const names = signedFieldNames(signature ?? '');
    const count = (name: string) => names.filter((entry) => entry === name).length;
    assert.equal(count('from'), 2);
    // present once → listed twice; absent → listed once
    for (const name of ['to', 'cc', 'subject', 'date', 'message-id', 'mime-version', 'content-type']) {
      assert.equal(count(name), 2, name);
    }
    assert.equal(count('list-unsubscribe'), 2);
    assert.equal(count('reply-to'), 1);
    assert.equal(count('list-unsubscribe-post'), 1);
    assert.equal(count('feedback-id'), 0, 'no Feedback-ID in this message, and it is not oversigned');
  });

  for (const added of [
    'From: Attacker <boss@evil.test>',
    'Reply-To: collect@evil.test',
    'Subject: Urgent: wire transfer',
    'List-Unsubscribe: <https://evil.test/u>',
    'Cc: leak@evil.test',
  ]) {
    test(`adding "${added.split(':')[0]}" after signing breaks the signature (on top or at the end)`, async () => {
      const signed = await signMessage(await composeMime({ ...base, text: 'pay the invoice' }), ed.key);
      assert.equal((await dkimResults(signed))[0]?.result, 'pass');
      const onTop = Buffer.concat([Buffer.from(`${added}\r\n`), signed]);
      const text = signed.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const atEnd = Buffer.from(`${text.slice(0, end)}\r\n${added}${text.slice(end)}`, 'latin1');
      for (const tampered of [onTop, atEnd]) {
        assert.notEqual((await dkimResults(tampered))[0]?.result, 'pass');
      }
    });
  }

  test('an Ed25519 key and its RSA companion give two signatures that both verify', async () => {
    const signed = await signMessage(await composeMime({ ...base, text: 'two signatures' }), [
      ed.key,
      rsa.key,
    ]);
    assert.equal(signatureHeaders(signed).length, 2);
    const results = await dkimResults(signed);
    assert.deepEqual(
      results.map((entry) => [entry.algorithm, entry.result]),
      [
        ['ed25519-sha256', 'pass'],
        ['rsa-sha256', 'pass'],
      ],
    );
  });
});

describe('complete MIME', () => {
  test('HTML-only content goes out as multipart/alternative with a text part derived from it', async () => {
    const html =
      '<h1>Order 1042</h1><p>Thank you, <b>Ann</b>.</p><ul><li>Tea</li><li>Cups</li></ul>' +
      '<p><a href="https://shop.test/orders/1042">Track your order</a></p><img src="https://shop.test/x.png" alt="">';
    const parsed = await PostalMime.parse(await composeMime({ ...base, html }));
    const raw = (await composeMime({ ...base, html })).toString();
    assert.match(raw, /^Content-Type: multipart\/alternative/im);
    assert.match(raw, /^Content-Type: text\/plain; charset=utf-8/im);
    assert.match(raw, /^Content-Type: text\/html; charset=utf-8/im);
    const text = parsed.text ?? '';
    assert.match(text, /Order 1042/);
    assert.match(text, /Thank you, Ann\./);
    assert.match(text, /\* Tea\n \* Cups/);
    assert.match(text, /Track your order \[https:\/\/shop\.test\/orders\/1042\]/);
    assert.doesNotMatch(text, /<|x\.png/);
  });

  test('an HTML fragment is wrapped in a complete UTF-8 document; a complete document is kept', () => {
    const wrapped = completeHtmlDocument('<p>Hi</p>', 'Tea & <cups>');
    assert.match(wrapped, /^<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">/);
    assert.match(wrapped, /<title>Tea &amp; &lt;cups&gt;<\/title>/);
    assert.match(wrapped, /<body>\n<p>Hi<\/p>\n<\/body>\n<\/html>/);
    const full = '<!doctype html><html lang="de"><head><title>x</title></head><body>y</body></html>';
    assert.equal(completeHtmlDocument(full), full);
  });

  test('text attachments declare their charset; others carry none; a given charset is kept', () => {
    assert.equal(attachmentContentType('text/plain', Buffer.from('Grüße')), 'text/plain; charset=utf-8');
    assert.equal(attachmentContentType('text/csv', Buffer.from('a,b\n')), 'text/csv; charset=utf-8');
    assert.equal(
      attachmentContentType('text/plain', Buffer.from([0x47, 0x72, 0xfc, 0xdf, 0x65])),
      'text/plain; charset=iso-8859-1',
    );
    assert.equal(
      attachmentContentType('text/plain; charset=shift_jis', Buffer.from('x')),
      'text/plain; charset=shift_jis',
    );
    assert.equal(attachmentContentType('application/pdf', Buffer.from('%PDF')), 'application/pdf');
  });

  test('non-ASCII subject, names, bodies and file names are encoded and round-trip through postal-mime', async () => {
    const subject = 'Grüße aus Köln — 你好, Ελλάδα 🎉 and a subject long enough to be folded over lines';
    const text = 'Hallo Jürgen,\nIhre Bestellung über 12 € ist unterwegs.\n日本語のテキスト\n';
    const html = '<p>Hallo Jürgen, Ihre Bestellung über <b>12 €</b> ist unterwegs. 日本語</p>';
    const raw = await composeMime({
      ...base,
      from: [{ email: 'orders@shop.test', name: 'Zoë Ünal — 店' }],
      to: [{ email: 'ann@example.net', name: 'Ånn Ström' }],
      cc: [{ email: 'carl@example.net', name: 'Карл' }],
      replyTo: [{ email: 'help@shop.test', name: 'Hilfe & Service' }],
      subject,
      text,
      html,
      attachments: [
        {
          filename: 'Rechnung März 2026 — Köln.txt',
          contentType: 'text/plain',
          content: Buffer.from('Grüße\n'),
        },
        { filename: '請求書.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.4') },
      ],
    });
    const head = raw.toString('latin1').split('\r\n\r\n')[0] ?? '';
    assert.ok(
      Buffer.from(head, 'latin1').every((byte) => byte < 0x80),
      'the header section is 7-bit ASCII',
    );
    assert.match(raw.toString('latin1'), /filename\*0\*=utf-8''Rechnung%20M%C3%A4rz/);
    const parsed = await PostalMime.parse(raw);
    assert.equal(parsed.subject, subject);
    assert.deepEqual(parsed.from, { address: 'orders@shop.test', name: 'Zoë Ünal — 店' });
    assert.deepEqual(parsed.to, [{ address: 'ann@example.net', name: 'Ånn Ström' }]);
    assert.deepEqual(parsed.cc, [{ address: 'carl@example.net', name: 'Карл' }]);
    assert.deepEqual(parsed.replyTo, [{ address: 'help@shop.test', name: 'Hilfe & Service' }]);
    assert.equal(sameLines(parsed.text), sameLines(text));
    assert.doesNotMatch(raw.toString('latin1'), /[^\r]\n/, 'every line break is CRLF');
    assert.match(parsed.html ?? '', /Hallo Jürgen, Ihre Bestellung über <b>12 €<\/b> ist unterwegs\. 日本語/);
    assert.deepEqual(
      parsed.attachments.map((attachment) => [attachment.filename, attachment.mimeType]),
      [
        ['Rechnung März 2026 — Köln.txt', 'text/plain'],
        ['請求書.pdf', 'application/pdf'],
      ],
    );
    assert.equal(Buffer.from(parsed.attachments[0]?.content as ArrayBuffer).toString('utf8'), 'Grüße\n');
  });

  test('Feedback-ID is set by the service, replacing one in the caller headers', async () => {
    const raw = await composeMime({
      ...base,
      text: 'x',
      headers: { 'feedback-id': 'forged:1:2:3', 'X-Campaign': 'autumn' },
      feedbackId: 'u:acc:shop.test:svc',
    });
    const head = raw.toString().split('\r\n\r\n')[0] ?? '';
    assert.equal(head.match(/^feedback-id:/gim)?.length, 1);
    assert.equal(headerValue(raw, 'feedback-id'), 'u:acc:shop.test:svc');
    assert.equal(headerValue(raw, 'x-campaign'), 'autumn');
  });
});

describe('EML pass-through', () => {
  const now = new Date('2026-11-23T10:00:00Z');
  const fresh = `Date: ${rfc5322Date(now)}`;

  test('Date and Message-ID are added when missing; other header fields stay byte for byte', () => {
    const eml = Buffer.from('From:   A <a@shop.test>\r\nX-Odd :  kept\r\nSubject: hi\r\n\r\nbody\r\n');
    const prepared = prepareEml(eml, '<m@shop.test>', { now, feedbackId: 'f:a:shop.test:svc' }).toString();
    assert.equal(
      prepared,
      `${fresh}\r\nMessage-ID: <m@shop.test>\r\nFeedback-ID: f:a:shop.test:svc\r\nFrom:   A <a@shop.test>\r\nX-Odd :  kept\r\nSubject: hi\r\n\r\nbody\r\n`,
    );
    assert.equal(fresh, 'Date: Mon, 23 Nov 2026 10:00:00 +0000');
  });

  test('a Date more than an hour off, or unreadable, is replaced in place; within the hour it is kept', () => {
    const withDate = (date: string) =>
      Buffer.from(
        `From: a@shop.test\r\nDate: ${date}\r\nMessage-ID: <own@x>\r\nFeedback-ID: own:1:2:x\r\n\r\nb`,
      );
    const keep = ['Mon, 23 Nov 2026 09:01:00 +0000', 'Mon, 23 Nov 2026 11:59:00 +0200'];
    for (const date of keep) {
      const eml = withDate(date);
      assert.equal(prepareEml(eml, '<m@x>', { now }), eml, date);
    }
    for (const date of ['Mon, 23 Nov 2026 08:59:00 +0000', 'Tue, 24 Nov 2026 10:00:00 +0000', 'someday']) {
      assert.equal(
        prepareEml(withDate(date), '<m@x>', { now }).toString(),
        `From: a@shop.test\r\n${fresh}\r\nMessage-ID: <own@x>\r\nFeedback-ID: own:1:2:x\r\n\r\nb`,
        date,
      );
    }
    const folded = Buffer.from('Date: Mon, 01 Jan\r\n 2001 00:00:00 +0000\r\nFrom: a@x\r\n\r\nb');
    assert.equal(
      prepareEml(folded, '<m@x>', { now }).toString(),
      `Message-ID: <m@x>\r\n${fresh}\r\nFrom: a@x\r\n\r\nb`,
    );
  });

  test('the service’s Feedback-ID replaces the EML’s own (no tenant files complaints under another’s tag)', () => {
    const eml = Buffer.from('From: a@shop.test\r\nFeedback-ID: u:aOTHERTENANT:shop.test:svc\r\n\r\nb');
    const prepared = prepareEml(eml, '<m@x>', { now, feedbackId: 'u:amine:shop.test:svc' }).toString();
    assert.equal(prepared.match(/^feedback-id:/gim)?.length, 1);
    assert.match(prepared, /^Feedback-ID: u:amine:shop\.test:svc\r$/m);
  });

  test('trace and authentication fields are removed before signing; everything else stays', () => {
    const eml = Buffer.from(
      `${[
        'Received: from mx.victim.example by relay; Mon, 23 Nov 2026 09:00:00 +0000',
        'Return-Path: <ceo@victim.example>',
        'Authentication-Results: mx.google.com; dkim=pass header.d=bank.example',
        'ARC-Seal: i=1; a=rsa-sha256; cv=none; d=google.com; s=arc; b=AAAA',
        'ARC-Authentication-Results: i=1; mx.google.com; spf=pass',
        'DKIM-Signature: v=1; a=rsa-sha256; d=bank.example; s=x; h=from; bh=AAA=;',
        '  b=BBBB',
        'Resent-From: boss@bank.example',
        'X-SES-Outgoing: 2026.11.23-1.2.3.4',
        'From: a@shop.test',
        'X-Received-Note: kept (not a trace field)',
        `Date: ${rfc5322Date(now)}`,
        'Message-ID: <own@x>',
        'Subject: hi',
      ].join('\r\n')}\r\n\r\nbody\r\n`,
    );
    const prepared = prepareEml(eml, '<m@x>', { now }).toString();
    assert.equal(
      prepared,
      `From: a@shop.test\r\nX-Received-Note: kept (not a trace field)\r\n${fresh}\r\nMessage-ID: <own@x>\r\nSubject: hi\r\n\r\nbody\r\n`,
    );
  });

  test('an EML without a body and one with bare LF line ends keep their form', () => {
    assert.equal(
      prepareEml(Buffer.from('From: a@x\nSubject: s'), '<m@x>', { now }).toString(),
      `${fresh}\nMessage-ID: <m@x>\nFrom: a@x\nSubject: s\n\n`,
    );
  });
});

describe('envelope and feedback', () => {
  test('MAIL FROM is a per-message address on the bounce subdomain', () => {
    assert.equal(
      bounceAddress('6F1C7A52-45A7-4A0E-9D44-8F1F4F1F2C3D', 'Shop.Test'),
      '6f1c7a52-45a7-4a0e-9d44-8f1f4f1f2c3d@bounce.shop.test',
    );
    assert.equal(mailFromDomain('shop.test', 'mail.return'), 'mail.return.shop.test');
    // A domain's own MAIL FROM domain (its mail_from_subdomain) wins over MAIL_FROM_SUBDOMAIN.
    assert.equal(
      bounceAddress('6F1C7A52-45A7-4A0E-9D44-8F1F4F1F2C3D', 'shop.test', 'Mail.Shop.Test'),
      '6f1c7a52-45a7-4a0e-9d44-8f1f4f1f2c3d@mail.shop.test',
    );
    assert.equal(parseMailFromSubdomain(undefined), 'bounce');
    assert.equal(parseMailFromSubdomain('Bounces.'), 'bounces');
    for (const bad of ['-x', 'a..b', 'under_score', 'a b'])
      assert.throws(() => parseMailFromSubdomain(bad), /MAIL_FROM/);
  });

  test('Feedback-ID has four colon-separated fields, whatever the tag holds', () => {
    assert.equal(feedbackId('u-1', 'acct-9', 'Shop.Test'), 'u-1:acct-9:shop.test:svc');
    assert.equal(feedbackId('u-1', 'auth0|a:b c\r\n', 'shop.test'), 'u-1:auth0|a-b-c-:shop.test:svc');
  });

  test('the account appears as an opaque, stable tag: a keyed hash that hides the account id', () => {
    const key = Buffer.alloc(32, 7);
    const tag = accountTag(key, 'alice@example.com');
    assert.match(tag, /^a[a-z2-7]{20}$/);
    assert.equal(accountTag(key, 'alice@example.com'), tag, 'stable for the account');
    assert.notEqual(accountTag(key, 'bob@example.com'), tag, 'distinct between accounts');
    assert.notEqual(accountTag(Buffer.alloc(32, 8), 'alice@example.com'), tag, 'unguessable without the key');
    assert.doesNotMatch(feedbackId('u-1', tag, 'shop.test'), /alice|example\.com/);
  });
});

describe('dual keys and retention rules', () => {
  test('only Ed25519 has an RSA companion', () => {
    assert.equal(companionAlgorithm('ed25519-sha256'), 'rsa-sha256');
    assert.equal(companionAlgorithm('rsa-sha256'), undefined);
  });

  test('the domain DNS status is the worst of its active records', () => {
    assert.equal(combinedDnsStatus(['verified', 'verified']), 'verified');
    assert.equal(combinedDnsStatus(['verified', 'pending']), 'pending');
    assert.equal(combinedDnsStatus(['pending', 'mismatch']), 'mismatch');
    assert.equal(combinedDnsStatus(['mismatch', 'unreachable', 'verified']), 'unreachable');
  });

  test('a retired key expires after the retention, an active one never', () => {
    const retiredAt = new Date('2026-11-01T00:00:00Z');
    const expiresAt = retiredKeyExpiry(retiredAt, 30);
    assert.equal(expiresAt, Date.parse('2026-12-01T00:00:00Z') / 1000);
    assert.equal(isExpiredKey({ status: 'retired', expiresAt }, Date.parse('2026-11-30T23:59:59Z')), false);
    assert.equal(isExpiredKey({ status: 'retired', expiresAt }, Date.parse('2026-12-01T00:00:00Z')), true);
    assert.equal(isExpiredKey({ status: 'active', expiresAt }, Date.parse('2027-01-01T00:00:00Z')), false);
    assert.equal(isExpiredKey({ status: 'retired' }, Date.parse('2027-01-01T00:00:00Z')), false);
  });
});
