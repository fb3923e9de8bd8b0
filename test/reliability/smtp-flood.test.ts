import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { selfSignedCertificate } from '../../submission/certificate.ts';
import { createSubmissionServer, type SubmissionServer } from '../../submission/server.ts';
import { makeKey } from '../support/apikeys.ts';
import { hostInfo } from '../support/host.ts';
import { newAccount, pageThrough, type TestAccount } from '../support/messages.ts';
import { queuedAs, rateLimitedGateway, submissionTransport } from '../support/submission.ts';

/**
 * An SMTP flood (docs/smtp.md): SMTP_FLOOD_MESSAGES messages (100 under npm test, 1,000 in
 * `npm run test:reliability`) over 20 connections
 * while the API behind the submission server is down for a while. Clients retry what got a 4xx, as
 * MTAs and mailers do, each message carrying its own X-Svc-Idempotency-Key; afterwards every message
 * exists exactly once.
 */
const total = Number(process.env.SMTP_FLOOD_MESSAGES ?? 100);
const connections = 20;
const tls = selfSignedCertificate();
let who: TestAccount;
let key: string;
let gateway: Awaited<ReturnType<typeof rateLimitedGateway>>;
let server: SubmissionServer;
let port = 0;

beforeAll(async () => {
  who = await newAccount('smtpflood');
  key = (await makeKey(who)).key;
  gateway = await rateLimitedGateway(hostInfo().url, 0);
  server = createSubmissionServer({ apiUrl: gateway.url, tls, log: () => undefined });
  port = (await server.listen(0, 0)).port;
});

afterAll(async () => {
  await server?.close();
  await gateway?.close();
});

describe('SMTP flood', () => {
  it(`accepts ${total} messages over ${connections} connections through an API outage, none lost or duplicated`, async () => {
    const tag = randomUUID().slice(0, 8);
    const pending = Array.from({ length: total }, (_, index) => index);
    const accepted = new Map<number, string>();
    let transient = 0;
    const from = `app@${who.domain}`;
    const worker = async () => {
      const transport = submissionTransport(key, { port, ca: tls.cert, pool: true });
      try {
        for (let index = pending.shift(); index !== undefined; index = pending.shift()) {
          const raw = Buffer.from(
            `From: ${from}\r\nTo: flood${index}@rcpt.test\r\nSubject: flood ${index}\r\nX-Svc-Tags: flood=${tag}\r\n` +
              `X-Svc-Idempotency-Key: flood-${tag}-${index}\r\n\r\nmessage ${index}\r\n`,
          );
          for (;;) {
            try {
              const info = await transport.sendMail({
                envelope: { from, to: [`flood${index}@rcpt.test`] },
                raw,
              });
              accepted.set(index, queuedAs.exec(info.response)?.[1] ?? 'unparsed');
              break;
            } catch (error) {
              const code = (error as { responseCode?: number }).responseCode ?? 0;
              if (code !== 0 && (code < 400 || code >= 500)) throw error;
              transient += 1;
              await new Promise((resolve) => setTimeout(resolve, 200));
            }
          }
          // The API goes down for a while once a fifth is in, and comes back at two fifths.
          if (accepted.size === Math.floor(total / 5)) gateway.setDown(true);
          if (accepted.size >= Math.floor((2 * total) / 5)) gateway.setDown(false);
        }
      } finally {
        transport.close();
      }
    };
    // Ends the outage even if every worker is waiting in it.
    const outageEnd = setInterval(() => {
      if (transient > connections * 3) gateway.setDown(false);
    }, 100);
    try {
      await Promise.all(Array.from({ length: connections }, worker));
    } finally {
      clearInterval(outageEnd);
    }
    assert.equal(accepted.size, total);
    assert.ok(transient > 0, 'the outage was felt: some messages got a 4xx and were retried');
    const uuids = new Set(accepted.values());
    assert.equal(uuids.size, total, 'each message has its own uuid');
    const pages = await pageThrough(who, { tag: { name: 'flood', value: tag } });
    const stored = pages.flatMap((page) => page.messages as { message_uuid: string }[]);
    assert.equal(stored.length, total, 'the account holds each message exactly once');
    assert.deepEqual(new Set(stored.map((message) => message.message_uuid)), uuids);
  }, 900_000);
});
