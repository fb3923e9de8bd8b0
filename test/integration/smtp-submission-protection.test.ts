import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { selfSignedCertificate } from '../../submission/certificate.ts';
import { createSubmissionServer, type SubmissionServer } from '../../submission/server.ts';
import { makeKey } from '../support/apikeys.ts';
import { hostInfo } from '../support/host.ts';
import { newAccount } from '../support/messages.ts';
import { submissionTransport } from '../support/submission.ts';

/**
 * The submission server's protection (docs/smtp.md, "Protection"), on a server of its own with
 * small limits in front of the run's real API: connection caps per address and per key (421),
 * AUTH failures answered ever more slowly, and a DATA deadline.
 */
const tls = selfSignedCertificate();
let server: SubmissionServer;
let ports: { port: number; securePort: number };
let key: string;
let domain: string;

beforeAll(async () => {
  const who = await newAccount('smtpguard');
  domain = who.domain;
  key = (await makeKey(who)).key;
  server = createSubmissionServer({
    apiUrl: hostInfo().url,
    tls,
    log: () => undefined,
    maxConnectionsPerAddress: 3,
    maxConnectionsPerKey: 2,
    authFailureDelayMs: 400,
    maxAuthFailureDelayMs: 2_000,
    dataTimeoutMs: 1_500,
  });
  ports = await server.listen(0, 0);
});

afterAll(async () => {
  await server.close();
});

/** Opens a plain connection and resolves with the greeting line. */
function greeting(): Promise<{ line: string; close: () => void }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: ports.port, host: '127.0.0.1' });
    socket.once('error', reject);
    socket.once('data', (chunk) => resolve({ line: chunk.toString(), close: () => socket.destroy() }));
  });
}

/** A conversation over STARTTLS: `expect` waits for a reply matching the pattern. */
async function startTlsSession() {
  const socket = connect({ port: ports.port, host: '127.0.0.1' });
  let text = '';
  const expectReply = (pattern: RegExp, from: NodeJS.EventEmitter) =>
    new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        text += chunk.toString();
        const match = pattern.exec(text);
        if (match !== null) {
          from.off('data', onData);
          text = text.slice(match.index + match[0].length);
          resolve(match[0]);
        }
      };
      from.on('data', onData);
      from.once('close', () => reject(new Error(`closed before ${pattern}: ${text}`)));
    });
  await expectReply(/^220 .*\r\n/m, socket);
  socket.write('EHLO client.test\r\n');
  await expectReply(/^250 .*\r\n/m, socket);
  socket.write('STARTTLS\r\n');
  await expectReply(/^220 .*\r\n/m, socket);
  const secure = tlsConnect({ socket, ca: tls.cert, servername: 'localhost' });
  await new Promise<void>((resolve) => secure.once('secureConnect', () => resolve()));
  secure.write('EHLO client.test\r\n');
  await expectReply(/^250 .*\r\n/m, secure);
  return {
    secure,
    send: (line: string, pattern: RegExp) => {
      secure.write(`${line}\r\n`);
      return expectReply(pattern, secure);
    },
    expectReply: (pattern: RegExp) => expectReply(pattern, secure),
  };
}

const authPlain = (pass: string) => `AUTH PLAIN ${Buffer.from(`\0apikey\0${pass}`).toString('base64')}`;

async function refusal(promise: Promise<unknown>): Promise<{ responseCode?: number; response?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { responseCode?: number; response?: string };
  }
  throw new Error('the server accepted what it must refuse');
}

describe('protection', () => {
  it('answers 421 to a connection beyond the per-address cap, and serves again once one closes', async () => {
    const open = [await greeting(), await greeting(), await greeting()];
    for (const connection of open) assert.match(connection.line, /^220 /);
    const fourth = await greeting();
    assert.match(fourth.line, /^421 .*Too many connections from your address/);
    fourth.close();
    open.pop()?.close();
    const again = await (async () => {
      for (let attempt = 0; attempt < 50; attempt += 1) {
        const next = await greeting();
        if (next.line.startsWith('220')) return next;
        next.close();
        await new Promise((resolve) => setImmediate(resolve));
      }
      throw new Error('the address stayed at its cap after a connection closed');
    })();
    for (const connection of [...open, again]) connection.close();
  });

  it('answers 421 to an AUTH beyond the per-key cap', async () => {
    const sessions = [await startTlsSession(), await startTlsSession(), await startTlsSession()];
    try {
      await sessions[0]?.send(authPlain(key), /^235 .*\r\n/m);
      await sessions[1]?.send(authPlain(key), /^235 .*\r\n/m);
      const third = await sessions[2]?.send(authPlain(key), /^\d{3} .*\r\n/m);
      assert.match(third ?? '', /^421 .*Too many connections for this key/);
    } finally {
      for (const session of sessions) session.secure.destroy();
    }
  });

  it('answers each further AUTH failure of an address more slowly', async () => {
    const started: number[] = [];
    const durations: number[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const client = submissionTransport(`svc_live_${randomUUID()}`, { port: ports.port, ca: tls.cert });
      started.push(Date.now());
      const refused = await refusal(client.verify());
      durations.push(Date.now() - (started[attempt] as number));
      client.close();
      assert.equal(refused.responseCode, 535, refused.response);
    }
    // The server waits at least 400, 800 and 1,200 ms before it answers (a lower bound: never flaky).
    assert.ok((durations[2] as number) >= 1_200, `third failure answered after ${durations[2]} ms`);
  });

  it('closes a DATA transfer that runs past its deadline with 421', async () => {
    const session = await startTlsSession();
    const secure = session.secure;
    await session.send(authPlain(key), /^235 .*\r\n/m);
    await session.send(`MAIL FROM:<app@${domain}>`, /^250 .*\r\n/m);
    await session.send('RCPT TO:<slow@rcpt.test>', /^250 .*\r\n/m);
    await session.send('DATA', /^354 .*\r\n/m);
    secure.write(`From: app@${domain}\r\nSubject: never ends\r\n\r\n`);
    // A client that keeps the transfer open, sending a little now and then, is cut at the deadline.
    const drip = setInterval(() => secure.write('.'), 300);
    try {
      const closing = await session.expectReply(/^421 .*\r\n/m);
      assert.match(closing, /took too long/);
    } finally {
      clearInterval(drip);
      secure.destroy();
    }
  });
});
