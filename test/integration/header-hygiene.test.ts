import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { addMessage, outboxEml, sendingDomain, verifyDkim, waitForStatus } from '../support/delivery.ts';
import { call } from '../support/host.ts';

/**
 * Trace and authentication header fields are the mail servers' and verifiers' to write: in JSON
 * `headers` each one is 107 with its own detail; in an EML they are removed before the service
 * signs, so no tenant sends a forged hop, verdict or signature under the platform's signature.
 */
const refused = [
  'Received',
  'Return-Path',
  'Resent-From',
  'resent-message-id',
  'Authentication-Results',
  'ARC-Seal',
  'ARC-Message-Signature',
  'DKIM-Signature',
  'X-SES-CONFIGURATION-SET',
  'x-ses-outgoing',
];

const b64 = (text: string) => Buffer.from(text).toString('base64');

function headerSection(eml: Buffer): string {
  const text = eml.toString('latin1');
  return text.slice(0, text.indexOf('\r\n\r\n'));
}

describe('header hygiene', () => {
  it('JSON headers: every trace or authentication header is 107 with a detail naming it', async () => {
    const sending = await sendingDomain('rsa-sha256');
    const response = await call('POST', '/message/add-1.0', {
      token: sending.token,
      body: {
        message_sender: `app@${sending.domain}`,
        to: ['reader@example.net'],
        subject: 'hi',
        content: { kind: 'text_only', text: 'hi' },
        headers: {
          ...Object.fromEntries(refused.map((name) => [name, 'forged'])),
          'X-Campaign': 'allowed',
        },
      },
    });
    assert.equal(response.status, 406, response.text);
    assert.equal(response.body.error.code, 107);
    const details = response.body.error.details as Array<{ field: string; message: string }>;
    for (const name of refused) {
      const detail = details.find((entry) => entry.field === `headers.${name}`);
      assert.ok(detail, `a detail for ${name}: ${response.text}`);
      assert.match(detail.message, /written by mail servers, never by the sender/);
    }
    assert.equal(details.length, refused.length, 'X-Campaign is allowed');

    const allowed = await call('POST', '/message/add-1.0', {
      token: sending.token,
      query: { dry_run: 'true' },
      body: {
        message_sender: `app@${sending.domain}`,
        to: ['reader@example.net'],
        subject: 'hi',
        content: { kind: 'text_only', text: 'hi' },
        headers: { 'X-Received-By-Crm': 'yes', 'X-Campaign': 'autumn' },
      },
    });
    assert.equal(allowed.status, 200, allowed.text);
  });

  it('EML: trace and authentication fields are removed before signing; the signature verifies', async () => {
    const sending = await sendingDomain('rsa-sha256');
    const forged = [
      'Received: from mx.bank.example (mx.bank.example [192.0.2.1]) by mx.google.com',
      'Return-Path: <ceo@bank.example>',
      'Authentication-Results: mx.google.com; dkim=pass header.d=bank.example; spf=pass',
      'ARC-Seal: i=1; a=rsa-sha256; cv=none; d=google.com; s=arc-20160816; b=AAAA',
      'ARC-Authentication-Results: i=1; mx.google.com; dkim=pass header.d=bank.example',
      'DKIM-Signature: v=1; a=rsa-sha256; d=bank.example; s=sel; h=from:subject; bh=AAAA;',
      ' b=BBBB',
      'Resent-From: security@bank.example',
      'X-SES-Outgoing: 2026.11.23-54.240.0.1',
    ];
    const own = [
      `From: Ops <ops@${sending.domain}>`,
      'To: reader@example.net',
      'Subject: Kept as written',
      'X-Ticket: #4711',
    ];
    const { uuid } = await addMessage(sending.token, {
      message_sender: `ops@${sending.domain}`,
      to: ['reader@example.net'],
      content: { kind: 'eml', eml: b64(`${[...forged, ...own].join('\r\n')}\r\n\r\nBody.\r\n`) },
    });
    await waitForStatus(sending.token, uuid, ['delivered']);
    const eml = outboxEml(uuid);
    assert.ok(eml, 'the message reached the recipients’ server');
    const head = headerSection(eml);
    for (const line of own) assert.ok(head.includes(line), line);
    for (const name of ['Return-Path', 'Authentication-Results', 'ARC-Seal', 'Resent-From', 'X-SES-Outgoing'])
      assert.doesNotMatch(head, new RegExp(`^${name}:`, 'im'), name);
    assert.doesNotMatch(head, /bank\.example/, 'nothing of the forged fields is left');
    // Only the service's own signature, and it verifies.
    const signatures = head.match(/^DKIM-Signature:/gim) ?? [];
    assert.equal(signatures.length, 1);
    const results = await verifyDkim(eml);
    assert.deepEqual(
      results.map((result) => [result.result, result.domain]),
      [['pass', sending.domain]],
    );
  });
});
