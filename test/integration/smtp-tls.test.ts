import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { relayTlsOptions } from '../../shared/delivery/mail/smtp-transport.ts';
import { TransportError } from '../../shared/delivery/mail/transport.ts';

/**
 * Relay credentials never travel in clear: a real SMTP server that requires AUTH but offers no
 * STARTTLS is refused before AUTH (nothing reaches its onAuth), unless SMTP_ALLOW_CLEARTEXT_AUTH
 * says the relay sits on a trusted network. A relay without credentials still works over plain SMTP.
 */
let server: SMTPServer;
let port = 0;
const logins: string[] = [];
const received: string[] = [];

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    // Plain SMTP only, and AUTH allowed without TLS, as a careless relay would.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push(`${auth.username}:${auth.password}`);
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        received.push(session.envelope.rcptTo.map((rcpt) => rcpt.address).join(','));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.server.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

afterEach(() => {
  delete process.env.SMTP_ALLOW_CLEARTEXT_AUTH;
});

async function send(url: string) {
  process.env.SMTP_URL = url;
  const { createSmtpTransport } = await import('../../shared/delivery/mail/smtp-transport.ts');
  const transport = await createSmtpTransport();
  const uuid = randomUUID();
  return transport.send({
    messageUuid: uuid,
    envelope: { from: `${uuid}@bounce.tls.test`, to: ['someone@tls.test'] },
    sender: 'app@tls.test',
    raw: Buffer.from(`From: app@tls.test\r\nTo: someone@tls.test\r\nSubject: tls\r\n\r\nbody\r\n`),
  });
}

describe('SMTP relay credentials and TLS', () => {
  it('refuses to send credentials to a relay that offers no STARTTLS; nothing reaches AUTH', async () => {
    const before = received.length;
    await assert.rejects(send(`smtp://mailer:s3cret@127.0.0.1:${port}`), (error: unknown) => {
      assert.ok(error instanceof TransportError);
      assert.match(error.message, /credentials are sent only over TLS/);
      assert.match(error.message, /SMTP_ALLOW_CLEARTEXT_AUTH/);
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
    assert.deepEqual(logins, [], 'the password never reached the relay');
    assert.equal(received.length, before);
  });

  it('SMTP_ALLOW_CLEARTEXT_AUTH=true lifts the rule for a relay on a trusted network', async () => {
    process.env.SMTP_ALLOW_CLEARTEXT_AUTH = 'true';
    const result = await send(`smtp://mailer:s3cret@127.0.0.1:${port}`);
    assert.equal(result.recipients[0]?.outcome, 'accepted');
    assert.deepEqual(logins, ['mailer:s3cret']);
  });

  it('a relay without credentials is used over plain SMTP as before', async () => {
    const before = received.length;
    const result = await send(`smtp://127.0.0.1:${port}`);
    assert.equal(result.recipients[0]?.outcome, 'accepted');
    assert.equal(received.length, before + 1);
  });

  it('the rule: credentials from the URL or from the secret need TLS, smtps:// already has it', () => {
    assert.deepEqual(relayTlsOptions('smtp://u:p@relay.example:587', false, false), { requireTLS: true });
    assert.deepEqual(relayTlsOptions('smtp://relay.example:587', true, false), { requireTLS: true });
    assert.deepEqual(relayTlsOptions('smtp://relay.example:587', false, false), {});
    assert.deepEqual(relayTlsOptions('smtps://u:p@relay.example:465', false, false), {});
    assert.deepEqual(relayTlsOptions('smtp://u:p@relay.example:587', false, true), {});
  });
});
