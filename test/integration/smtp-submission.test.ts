import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { selfSignedCertificate } from '../../submission/certificate.ts';
import { createSubmissionServer } from '../../submission/server.ts';
import { makeKey } from '../support/apikeys.ts';
import {
  outboxEml,
  outboxEnvelope,
  queryMessage,
  type SendingDomain,
  sendingDomain,
  verifyDkim,
  waitForStatus,
} from '../support/delivery.ts';
import { hostInfo } from '../support/host.ts';
import { composeRaw, rateLimitedGateway, submissionTransport, submit } from '../support/submission.ts';

/**
 * The SMTP submission server of the local host (docs/smtp.md) with real clients over real TLS:
 * the password is an API key, the message reaches the recipients byte for byte (apart from Bcc and
 * the X-Svc-* headers), signed, and every rule of the API applies.
 */
let sender: SendingDomain;
let key: string;

beforeAll(async () => {
  sender = await sendingDomain('rsa-sha256');
  key = (
    await makeKey({
      account: sender.account,
      domain: sender.domain,
      token: sender.token,
      sender: `app@${sender.domain}`,
    })
  ).key;
});

function smtpErrorOf(error: unknown): { responseCode?: number; response?: string } {
  return error as { responseCode?: number; response?: string };
}

async function refusal(promise: Promise<unknown>): Promise<{ responseCode?: number; response?: string }> {
  try {
    await promise;
  } catch (error) {
    return smtpErrorOf(error);
  }
  throw new Error('the server accepted what it must refuse');
}

function simpleRaw(from: string, to: string, extra = ''): Buffer {
  return Buffer.from(
    `From: App <${from}>\r\nTo: <${to}>\r\nSubject: plain ${randomUUID()}\r\nMessage-ID: <${randomUUID()}@${from.split('@')[1]}>\r\n${extra}Content-Type: text/plain; charset=utf-8\r\n\r\nHello over SMTP\r\n`,
  );
}

/** A conversation on a raw socket: each line sent, each reply read. */
async function converse(port: number, lines: readonly string[], secure = false): Promise<string[]> {
  const socket = secure
    ? tlsConnect({ port, host: '127.0.0.1', ca: hostInfo().submission.certificate, servername: 'localhost' })
    : connect({ port, host: '127.0.0.1' });
  const replies: string[] = [];
  let buffer = '';
  const nextReply = () =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = /(?:^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buffer);
        if (match === null) return false;
        const end = match.index + match[0].length;
        const reply = buffer.slice(0, end).trim();
        buffer = buffer.slice(end);
        resolve(reply);
        return true;
      };
      if (check()) return;
      const onData = (chunk: Buffer) => {
        buffer += chunk.toString();
        if (check()) socket.off('data', onData);
      };
      socket.on('data', onData);
      socket.once('error', reject);
      socket.once('close', () => resolve(buffer.trim() || 'closed'));
    });
  replies.push(await nextReply());
  for (const line of lines) {
    socket.write(`${line}\r\n`);
    replies.push(await nextReply());
  }
  socket.destroy();
  return replies;
}

describe('authentication', () => {
  it('refuses AUTH before STARTTLS (538), so a key never travels in clear', async () => {
    const replies = await converse(hostInfo().submission.port, [
      'EHLO client.test',
      `AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`,
    ]);
    assert.match(replies[1] as string, /^250/);
    assert.match(replies[2] as string, /^538 /);
  });

  it('answers 535 5.7.8 to a bad key, over STARTTLS and over implicit TLS', async () => {
    for (const secure of [false, true]) {
      const refused = await refusal(
        submit({
          key: `svc_live_${randomUUID()}`,
          secure,
          from: `app@${sender.domain}`,
          to: ['x@rcpt.test'],
          raw: simpleRaw(`app@${sender.domain}`, 'x@rcpt.test'),
        }),
      );
      assert.equal(refused.responseCode, 535, refused.response);
      assert.match(refused.response ?? '', /5\.7\.8/);
    }
  });

  it('accepts a good key with AUTH LOGIN over implicit TLS and answers queued as <message_uuid>', async () => {
    const { uuid, response } = await submit({
      key,
      secure: true,
      authMethod: 'LOGIN',
      from: `app@${sender.domain}`,
      to: ['login@rcpt.test'],
      raw: simpleRaw(`app@${sender.domain}`, 'login@rcpt.test'),
    });
    assert.match(response, /^250 2\.0\.0 Ok: queued as /);
    const message = await queryMessage(sender.token, uuid);
    assert.equal(message.content_kind, 'eml');
  });

  it('refuses MAIL FROM a domain the key may not send from (550 5.7.1)', async () => {
    const refused = await refusal(
      submit({
        key,
        from: 'app@not-mine.test',
        to: ['x@rcpt.test'],
        raw: simpleRaw('app@not-mine.test', 'x@rcpt.test'),
      }),
    );
    assert.equal(refused.responseCode, 550, refused.response);
    assert.match(refused.response ?? '', /5\.7\.1/);
  });

  it('is no open relay: without AUTH, MAIL and RCPT are refused, on both ports', async () => {
    const { port, securePort } = hostInfo().submission;
    for (const [target, secure] of [
      [port, false],
      [securePort, true],
    ] as const) {
      const replies = await converse(
        target,
        ['EHLO relay.test', `MAIL FROM:<app@${sender.domain}>`, 'RCPT TO:<victim@elsewhere.test>', 'DATA'],
        secure,
      );
      assert.match(replies[2] as string, /^530 /, `MAIL without AUTH: ${replies[2]}`);
      assert.match(replies[3] as string, /^5\d\d /, `RCPT without AUTH: ${replies[3]}`);
      assert.match(replies[4] as string, /^5\d\d /, `DATA without AUTH: ${replies[4]}`);
    }
  });
});

describe('messages', () => {
  it('delivers To, Cc and an envelope-only Bcc the bytes the client sent, DKIM-valid, without the Bcc header', async () => {
    const from = `app@${sender.domain}`;
    const raw = await composeRaw({
      from: `App <${from}>`,
      to: 'To One <to1@rcpt.test>',
      cc: 'cc1@rcpt.test',
      bcc: 'hidden@rcpt.test',
      subject: `Everything survives ${randomUUID()}`,
      messageId: `<${randomUUID()}@${sender.domain}>`,
      inReplyTo: '<earlier@rcpt.test>',
      references: ['<first@rcpt.test>', '<earlier@rcpt.test>'],
      list: { unsubscribe: { url: 'https://app.test/unsubscribe/1', comment: 'Unsubscribe' } },
      text: 'See the picture',
      html: '<p>See <img src="cid:logo@app.test"></p>',
      attachments: [
        { filename: 'logo.png', content: Buffer.from('89504e470d0a1a0a', 'hex'), cid: 'logo@app.test' },
        { filename: 'a.txt', content: 'first attachment' },
        { filename: 'b.csv', content: 'x,y\n1,2\n' },
        { filename: 'c.bin', content: Buffer.from([0, 1, 2, 3, 254, 255]) },
      ],
    });
    assert.match(raw.toString(), /^Bcc: /m, 'the client put Bcc in the header');
    const envelopeOnly = 'envelope-only@rcpt.test';
    const { uuid } = await submit({
      key,
      from,
      to: ['to1@rcpt.test', 'cc1@rcpt.test', 'hidden@rcpt.test', envelopeOnly],
      raw,
    });
    await waitForStatus(sender.token, uuid, ['delivered']);
    const delivered = outboxEml(uuid);
    assert.ok(delivered !== undefined, 'the local mail server received it');
    const expected = Buffer.from(raw.toString('latin1').replace(/^Bcc: .*\r\n/m, ''), 'latin1');
    assert.ok(
      delivered.subarray(delivered.length - expected.length).equals(expected),
      'byte for byte after the signature',
    );
    const added = delivered.subarray(0, delivered.length - expected.length).toString();
    assert.doesNotMatch(added + delivered.toString(), /^Bcc:/im, 'no delivered copy shows a Bcc header');
    assert.match(added, /^DKIM-Signature:/);
    const dkim = await verifyDkim(delivered);
    assert.ok(dkim.length > 0 && dkim.every((result) => result.result === 'pass'), JSON.stringify(dkim));
    const envelopes = outboxEnvelope(uuid);
    expect(envelopes?.recipients.sort()).toEqual(
      ['to1@rcpt.test', 'cc1@rcpt.test', 'hidden@rcpt.test', envelopeOnly].sort(),
    );
    const stored = await queryMessage(sender.token, uuid);
    const kinds = Object.fromEntries(
      (stored.recipients as { email: string; kind: string }[]).map((recipient) => [
        recipient.email,
        recipient.kind,
      ]),
    );
    expect(kinds).toEqual({
      'to1@rcpt.test': 'to',
      'cc1@rcpt.test': 'cc',
      'hidden@rcpt.test': 'bcc',
      [envelopeOnly]: 'bcc',
    });
  });

  it('maps X-Svc-Tags and X-Svc-Metadata-* to tags and metadata, and removes them', async () => {
    const from = `app@${sender.domain}`;
    const raw = simpleRaw(
      from,
      'tags@rcpt.test',
      'X-Svc-Tags: kind=welcome, plan=pro\r\nX-Svc-Metadata-Order-Id: 4711\r\n',
    );
    const { uuid } = await submit({ key, from, to: ['tags@rcpt.test'], raw });
    const stored = await queryMessage(sender.token, uuid);
    expect(stored.tags).toEqual([
      { name: 'kind', value: 'welcome' },
      { name: 'plan', value: 'pro' },
    ]);
    expect(stored.metadata).toEqual({ 'order-id': '4711' });
    await waitForStatus(sender.token, uuid, ['delivered']);
    assert.doesNotMatch(outboxEml(uuid)?.toString() ?? '', /^X-Svc-/im);
  });

  it('gives one message for an X-Svc-Idempotency-Key sent twice', async () => {
    const from = `app@${sender.domain}`;
    const raw = simpleRaw(from, 'once@rcpt.test', `X-Svc-Idempotency-Key: ${randomUUID()}\r\n`);
    const first = await submit({ key, from, to: ['once@rcpt.test'], raw });
    const second = await submit({ key, from, to: ['once@rcpt.test'], raw });
    assert.equal(second.uuid, first.uuid);
  });

  it('refuses a message over the advertised SIZE with 552', async () => {
    const from = `app@${sender.domain}`;
    const transport = submissionTransport(key);
    try {
      const raw = simpleRaw(from, 'big@rcpt.test', `X-Padding: ${'x'.repeat(4_500_000)}\r\n`);
      const refused = await refusal(transport.sendMail({ envelope: { from, to: ['big@rcpt.test'] }, raw }));
      assert.equal(refused.responseCode, 552, refused.response);
    } finally {
      transport.close();
    }
  });

  it("turns the API's rate limit (115) into a 451 the client retries", async () => {
    // The local API's per-account bucket refills faster than a loaded test machine can drain it, so
    // a real HTTP proxy in front of the real gateway answers the API's 115 (status, headers, body as
    // the gateway gives them) to the first two sends; everything else goes through unchanged.
    const limited = await rateLimitedGateway(hostInfo().url, 2);
    const tls = selfSignedCertificate();
    const server = createSubmissionServer({ apiUrl: limited.url, tls, log: () => undefined });
    const ports = await server.listen(0, 0);
    const from = `app@${sender.domain}`;
    const transport = submissionTransport(key, { port: ports.port, ca: tls.cert });
    try {
      const raw = simpleRaw(from, 'later@rcpt.test');
      const refused = await refusal(transport.sendMail({ envelope: { from, to: ['later@rcpt.test'] }, raw }));
      assert.equal(refused.responseCode, 451, refused.response);
      assert.match(refused.response ?? '', /4\.7\.0 code 115: Too many requests/);
      const accepted = await vi.waitFor(
        () => transport.sendMail({ envelope: { from, to: ['later@rcpt.test'] }, raw }),
        { timeout: 30_000, interval: 200 },
      );
      assert.match(accepted.response, /queued as/);
      assert.equal(limited.refused(), 2);
    } finally {
      transport.close();
      await server.close();
      await limited.close();
    }
  });
});
