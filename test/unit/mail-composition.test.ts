import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { composeMime, headerValue, messageIdFor, prepareEml } from '../../shared/delivery/mail/compose.ts';
import { type SigningKey, signMessage } from '../../shared/delivery/mail/dkim-signer.ts';
import { testSigningKey, verifyDkimOffline } from '../support/dkim-offline.ts';

const base = {
  messageId: messageIdFor('0b7e0c52-45a7-4a0e-9d44-8f1f4f1f2c3d', 'shop.test'),
  sender: 'orders@shop.test',
  from: [{ email: 'orders@shop.test', name: 'Shop' }],
  to: [{ email: 'ann@example.net', name: 'Ann' }],
  cc: [{ email: 'carl@example.net' }],
  replyTo: [{ email: 'help@shop.test' }],
  subject: 'Your order',
  attachments: [],
};

const keyPair = (algorithm: SigningKey['algorithm']) => testSigningKey(algorithm, 's1');
const dkimResult = (raw: Buffer, txt: string) => verifyDkimOffline(raw, { 's1._domainkey.shop.test': txt });

describe('MIME composition', () => {
  test('headers carry from, to, cc, reply-to and the Message-ID; bcc is nowhere', async () => {
    const raw = await composeMime({
      ...base,
      text: 'hello',
      html: '<p>hello</p>',
      headers: { 'X-Tag': 'a' },
    });
    assert.equal(headerValue(raw, 'message-id'), '<0b7e0c52-45a7-4a0e-9d44-8f1f4f1f2c3d@shop.test>');
    assert.equal(headerValue(raw, 'from'), 'Shop <orders@shop.test>');
    assert.equal(headerValue(raw, 'cc'), 'carl@example.net');
    assert.equal(headerValue(raw, 'reply-to'), 'help@shop.test');
    assert.equal(headerValue(raw, 'x-tag'), 'a');
    assert.equal(headerValue(raw, 'sender'), undefined);
    assert.equal(headerValue(raw, 'bcc'), undefined);
    assert.match(headerValue(raw, 'content-type') ?? '', /multipart\/alternative/);
  });

  test('a caller cannot replace structural headers; several authors get a Sender', async () => {
    const raw = await composeMime({
      ...base,
      from: [{ email: 'a@shop.test' }, { email: 'b@shop.test' }],
      text: 'x',
      headers: { 'Message-ID': '<evil@x>', Bcc: 'spy@x' },
    });
    assert.equal(headerValue(raw, 'message-id'), base.messageId);
    assert.equal(headerValue(raw, 'bcc'), undefined);
    assert.equal(headerValue(raw, 'sender'), 'orders@shop.test');
  });

  const sentAt = new Date('2026-11-23T10:00:00Z');
  const recent = 'Mon, 23 Nov 2026 09:30:00 +0000';

  test('an EML passes through unchanged when it has a Message-ID, a current Date and no Bcc', () => {
    const eml = Buffer.from(
      `From: a@shop.test\r\nTo: b@x.test\r\nDate: ${recent}\r\nMessage-ID: <own@shop.test>\r\nSubject: hi\r\n\r\nbody\r\n`,
    );
    assert.equal(prepareEml(eml, base.messageId, { now: sentAt }), eml);
  });

  test('an EML loses its Bcc field (folded too) and gains a Message-ID only if it had none', () => {
    const eml = Buffer.from(
      `From: a@shop.test\r\nBcc: spy@x.test,\r\n other@x.test\r\nDate: ${recent}\r\nTo: b@x.test\r\n\r\nbody\r\n`,
    );
    const prepared = prepareEml(eml, base.messageId, { now: sentAt }).toString();
    assert.equal(
      prepared,
      `Message-ID: ${base.messageId}\r\nFrom: a@shop.test\r\nDate: ${recent}\r\nTo: b@x.test\r\n\r\nbody\r\n`,
    );
    const last = prepareEml(
      Buffer.from(`From: a@shop.test\r\nDate: ${recent}\r\nBcc: spy@x.test\r\n\r\nbody`),
      '<m@x>',
      { now: sentAt },
    ).toString();
    assert.equal(last, `Message-ID: <m@x>\r\nFrom: a@shop.test\r\nDate: ${recent}\r\n\r\nbody`);
  });
});

describe('DKIM signing', () => {
  for (const algorithm of ['rsa-sha256', 'ed25519-sha256'] as const) {
    test(`${algorithm}: the signature verifies against the published key`, async () => {
      const { key, txt } = keyPair(algorithm);
      const signed = await signMessage(await composeMime({ ...base, text: 'signed body' }), key);
      const results = await dkimResult(signed, txt);
      assert.equal(results[0]?.status.result, 'pass');
      assert.equal(results[0]?.status.header?.a, algorithm);
    });
  }

  test('a tampered body fails verification', async () => {
    const { key, txt } = keyPair('ed25519-sha256');
    const signed = await signMessage(await composeMime({ ...base, text: 'original' }), key);
    const tampered = Buffer.from(signed.toString().replace('original', 'changed!'));
    assert.notEqual((await dkimResult(tampered, txt))[0]?.status.result, 'pass');
  });

  test('headers a relay rewrites are left out of the signature, oversigned or not', async () => {
    const { key } = keyPair('rsa-sha256');
    const signed = await signMessage(await composeMime({ ...base, text: 'x' }), key, ['Message-ID', 'Date']);
    const signature = (headerValue(signed, 'dkim-signature') ?? '').replace(/\s+/g, '');
    const signedFields = (signature.match(/h=([^;]+)/)?.[1] ?? '').toLowerCase().split(':');
    assert.equal(signedFields.filter((name) => name === 'from').length, 2);
    assert.ok(!signedFields.includes('message-id'));
    assert.ok(!signedFields.includes('date'));
  });
});
