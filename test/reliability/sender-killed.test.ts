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
import { recordFigures } from '../support/figures.ts';
import { uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

/*
 * The sender killed mid-batch. A sender instance runs in its own process on one SQS batch of 10
 * messages, against a relay (in this test) that accepts the first 4 messages and then stalls on
 * DATA. Once those 4 are recorded, the process is killed with SIGKILL: 6 messages are left
 * `processing` under the dead instance's lease (5 s here). When the leases expire, the dispatcher
 * queues them again and the shared host's sender sends them to its local MTA. Every message is
 * accepted by exactly one relay, exactly once: the stalled transactions never got a 250 to DATA.
 * (The one window where a kill duplicates mail, after the relay's 250 and before the outcome is
 * recorded, is described in docs/delivery.md; it is not what this test provokes.)
 */
const batch = 10;
const acceptFirst = 4;
const projectRoot = join(import.meta.dirname, '..', '..');

const acceptedByStalling = new Map<string, number>();
let accepted = 0;
let stalled = 0;
const relay = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  onData(stream, _session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const uuid = raw.match(/^Message-ID:\s*<([0-9a-f-]{36})@/im)?.[1] ?? 'unknown';
      if (accepted < acceptFirst) {
        accepted += 1;
        acceptedByStalling.set(uuid, (acceptedByStalling.get(uuid) ?? 0) + 1);
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

describe('the sender killed mid-batch', () => {
  it(`a batch of ${batch}: ${acceptFirst} sent, then SIGKILL; the rest are retried and every message is sent once`, async () => {
    const account = uniqueAccount('kill');
    const domain = uniqueDomain('kill');
    await registerDomain(domain, account);
    const uuids: string[] = [];
    for (let index = 0; index < batch; index++)
      uuids.push(await putTestMessage({ account, domain, to: [`killed-${index}@example.net`] }));

    const address = relay.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', 'test/support/sender-child.ts', ...uuids],
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
    // Wait until the first messages are recorded as delivered and the rest hang at DATA.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const states = await Promise.all(uuids.map((uuid) => getDeliveryMessage(uuid)));
      const done = states.filter((message) => message?.status === 'delivered').length;
      const processing = states.filter((message) => message?.status === 'processing').length;
      if (done === acceptFirst && processing === batch - acceptFirst && stalled === batch - acceptFirst)
        break;
      assert.ok(
        Date.now() < deadline,
        `batch did not reach the kill point: ${done} delivered, ${processing} processing`,
      );
      assert.equal(child.exitCode, null, 'the sender process ended on its own');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');

    // The dead instance's leases expire; the dispatcher queues the messages again.
    const leases = await Promise.all(uuids.map((uuid) => getDeliveryMessage(uuid)));
    const lastLease = Math.max(...leases.map((message) => message?.lease_until ?? 0));
    while (Date.now() <= lastLease) await new Promise((resolve) => setTimeout(resolve, 200));
    await runDispatcher();
    const settled = await Promise.all(uuids.map((uuid) => waitForMessage(uuid, isSettled, 300_000)));

    let lost = 0;
    let duplicates = 0;
    let retried = 0;
    for (const [index, uuid] of uuids.entries()) {
      assert.equal(settled[index]?.status, 'delivered', uuid);
      const count = (acceptedByStalling.get(uuid) ?? 0) + smtpTransactions(uuid).length;
      if (count === 0) lost += 1;
      duplicates += Math.max(0, count - 1);
      if ((settled[index]?.attempts ?? 0) > 1) retried += 1;
    }
    recordFigures('faults: sender killed mid-batch', {
      batch,
      sent_before_kill: acceptFirst,
      in_flight_at_kill: batch - acceptFirst,
      retried,
      lost,
      duplicates,
    });
    assert.equal(retried, batch - acceptFirst);
    assert.equal(lost, 0);
    assert.equal(duplicates, 0);
  });
});
