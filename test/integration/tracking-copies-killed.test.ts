import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { getDeliveryMessage } from '../../shared/delivery/store/message-delivery.ts';
import { registerDomain } from '../../shared/domains/registry.ts';
import {
  isSettled,
  putTestMessage,
  runDispatcher,
  smtpTransactions,
  waitForMessage,
} from '../support/delivery.ts';
import { uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

/*
 * A sender killed between two copies of a tracked message (docs/tracking.md, "Copies"). A sender
 * instance in its own process sends a tracked message to two recipients through a relay (in this
 * test) that accepts the first copy and stalls on the second's DATA; once the first copy is
 * written, the process is killed with SIGKILL. When its lease expires, the dispatcher queues the
 * message again and the shared host's sender sends it to its local MTA: only the second copy, and
 * each recipient has one `sent` entry.
 */
const projectRoot = join(import.meta.dirname, '..', '..');
const first = 'first-copy@example.net';
const second = 'second-copy@example.net';

const relayed: string[] = [];
let stalled = 0;
const relay = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  onData(stream, session, callback) {
    stream.resume();
    stream.on('end', () => {
      const to = session.envelope.rcptTo.map((address) => address.address);
      if (to.includes(first)) {
        relayed.push(...to);
        callback(null, 'Ok');
      } else stalled += 1; // never answered: the sender waits until it is killed
    });
  },
});

beforeAll(async () => {
  useHostEnvironment();
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', () => resolve()));
});
afterAll(async () => {
  await new Promise<void>((resolve) => relay.close(() => resolve()));
});

describe('tracked copies and a killed sender', () => {
  it('the copies the relay accepted are written one by one: after the lease, only the others go out', async () => {
    const account = uniqueAccount('copykill');
    const domain = uniqueDomain('copykill');
    await registerDomain(domain, account);
    const uuid = await putTestMessage({
      account,
      domain,
      to: [first, second],
      kind: 'html_only',
      tracking: { opens: true, clicks: false },
      // Watched when the short lease below ends (SEND_LEASE_SECONDS; the service watches a message
      // it queues at the end of a lease taken at once, 120 s by default).
      dueAtMs: Date.now() + 5_000,
    });

    const address = relay.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', 'test/support/sender-child.ts', uuid],
      {
        cwd: projectRoot,
        env: {
          ...process.env,
          SMTP_URL: `smtp://127.0.0.1:${port}`,
          SMTP_FINAL_HOP: 'true',
          SEND_LEASE_SECONDS: '5',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<string | null>((resolve) =>
      child.once('exit', (_code, signal) => resolve(signal)),
    );
    // The first copy accepted and written, the second hanging at DATA.
    const deadline = Date.now() + 60_000;
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    for (;;) {
      const message = await getDeliveryMessage(uuid);
      if (message?.composed?.copies?.length === 1 && stalled === 1) break;
      assert.ok(
        Date.now() < deadline,
        `the send did not reach the kill point: ${message?.status}, relayed ${relayed.join(', ')}, ${stalled} stalled; the sender said: ${output.slice(-2000)}`,
      );
      assert.equal(child.exitCode, null, 'the sender process ended on its own');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Still sending: what is written of the first copy was written before the second went out
    // (a sender that gives up on the stalled relay records its copies on the way out).
    assert.equal(child.exitCode, null, 'the sender process ended on its own');
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');

    const killed = await getDeliveryMessage(uuid);
    assert.equal(killed?.status, 'processing');
    assert.deepEqual(
      killed?.recipients.map((recipient) => recipient.status),
      ['delivered', 'pending'],
    );
    while (Date.now() <= (killed?.lease_until ?? 0)) await new Promise((resolve) => setTimeout(resolve, 100));
    await runDispatcher();
    const settled = await waitForMessage(uuid, isSettled);

    assert.deepEqual(relayed, [first], 'the relay took the first copy once');
    assert.deepEqual(
      smtpTransactions(uuid).map((transaction) => transaction.recipients),
      [[second]],
      'the retry sent only the copy still owed',
    );
    assert.equal(settled.status, 'delivered');
    assert.deepEqual(
      settled.recipients.map((recipient) => recipient.status),
      ['delivered', 'delivered'],
    );
    assert.deepEqual(
      settled.composed?.copies?.map((copy) => copy.recipient),
      [0, 1],
    );
    for (const email of [first, second]) {
      const sent = settled.history.filter((entry) => entry.status === 'sent' && entry.recipient === email);
      assert.equal(sent.length, 1, `one sent entry for ${email}`);
    }
  });
});
