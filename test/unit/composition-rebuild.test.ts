import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { type ComposableMessage, composeSignedMessage } from '../../shared/delivery/compose-message.ts';
import { wireForm } from '../../shared/delivery/mail/compose.ts';
import type { MessageBodies } from '../../shared/delivery/store/message-delivery.ts';
import { testSigningKey, verifyDkimOffline } from '../support/dkim-offline.ts';

/*
 * The content route rebuilds a sent message from its composition record instead of storing it
 * (docs/decisions/0036-message-content-rebuilt.md): composing again with the same time, keys
 * and relay must give the same bytes, for every kind of content and both signing algorithms.
 */
const message = (uuid: string, kind: ComposableMessage['content_kind']): ComposableMessage => ({
  message_uuid: uuid,
  account_id: 'acct-1',
  tenant: 'shop.test',
  message_sender: 'orders@shop.test',
  content_kind: kind,
  from: [{ email: 'orders@shop.test', name: 'Shop' }],
  to: [{ email: 'ada@example.net', name: 'Ada Lovelace' }],
  cc: [],
  reply_to: [],
  subject: 'Your order, très bien',
  headers: { 'X-Campaign': 'orders' },
  attachments:
    kind === 'mixed'
      ? [{ filename: 'Rechnung März.pdf', content_type: 'application/pdf', size: 5, offset: 0 }]
      : [],
});
const uuid = '3f6c2a10-5b7e-4c1d-9e8f-0a1b2c3d4e5f';
const at = new Date('2026-11-23T10:00:00.000Z');
const rsa = testSigningKey('rsa-sha256', 'rsa1');
const ed = testSigningKey('ed25519-sha256', 'ed1');

const bodies: Record<ComposableMessage['content_kind'], MessageBodies> = {
  mixed: {
    text: Buffer.from('Hello Ada,\nyour order.\n'),
    html: Buffer.from('<p>Hello <b>Ada</b></p>'),
    attachments: [Buffer.from('%PDF-')],
  },
  html_only: { html: Buffer.from('<h1>Hi</h1><p>Only HTML</p>'), attachments: [] },
  text_only: { text: Buffer.from('Only text'), attachments: [] },
  // An EML with bare LF line ends: it is signed, and rebuilt, in its wire form.
  eml: {
    eml: Buffer.from('From: orders@shop.test\nTo: ada@example.net\nSubject: eml\n\nbody line\n'),
    attachments: [],
  },
};

describe('a composition rebuilds to the same bytes', () => {
  for (const kind of ['mixed', 'html_only', 'text_only', 'eml'] as const) {
    test(`${kind}, signed with RSA and Ed25519`, async () => {
      const composition = {
        at,
        keys: [ed.key, rsa.key],
        transport: 'smtp' as const,
        feedbackTag: 'afeedbacktag',
      };
      const first = await composeSignedMessage(message(uuid, kind), bodies[kind], composition);
      const again = await composeSignedMessage(message(uuid, kind), bodies[kind], composition);
      assert.ok(first.signed);
      assert.ok(first.raw.equals(again.raw), 'the rebuilt message differs');
      // It is the wire form (CRLF only, ending in CRLF), and both signatures verify.
      assert.ok(first.raw.equals(wireForm(first.raw)));
      const verdicts = await verifyDkimOffline(first.raw, {
        'rsa1._domainkey.shop.test': rsa.txt,
        'ed1._domainkey.shop.test': ed.txt,
      });
      assert.deepEqual(
        verdicts.map((verdict) => verdict.status.result),
        ['pass', 'pass'],
      );
    });
  }

  test('another time, another uuid or another relay gives other bytes', async () => {
    const composition = { at, keys: [rsa.key], transport: 'smtp' as const, feedbackTag: 'afeedbacktag' };
    const base = (await composeSignedMessage(message(uuid, 'mixed'), bodies.mixed, composition)).raw;
    const later = await composeSignedMessage(message(uuid, 'mixed'), bodies.mixed, {
      ...composition,
      at: new Date(at.getTime() + 1000),
    });
    const other = await composeSignedMessage(
      message('3f6c2a10-5b7e-4c1d-9e8f-0a1b2c3d4e60', 'mixed'),
      bodies.mixed,
      composition,
    );
    const ses = await composeSignedMessage(message(uuid, 'mixed'), bodies.mixed, {
      ...composition,
      transport: 'ses',
    });
    for (const raw of [later.raw, other.raw, ses.raw]) assert.ok(!raw.equals(base));
  });

  test('wireForm turns bare CR and LF into CRLF and ends the message with CRLF, as SMTP DATA does', () => {
    assert.equal(wireForm(Buffer.from('a\nb\rc\r\nd')).toString(), 'a\r\nb\r\nc\r\nd\r\n');
    const done = Buffer.from('a\r\n');
    assert.equal(wireForm(done), done);
  });
});
