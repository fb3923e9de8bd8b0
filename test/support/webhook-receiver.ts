import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { vi } from 'vitest';
import { webhookEventProblems } from './contract.ts';

/**
 * A real HTTP receiver on loopback for the webhook tests: it records every request (headers, raw
 * body, time) and answers with whatever `respond` says for it (200 by default).
 *
 * Every body it receives is checked against `WebhookEvent` in the committed docs/openapi.json (the
 * published schema of the event bodies, test/support/contract.ts), as `call()` checks every response:
 * a body that does not match fails the test at its next `waitFor`, or at `close` at the latest, so
 * the real bodies and the documented ones cannot drift apart.
 */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** How the bodies received so far differ from `WebhookEvent` (docs/openapi.json); empty when they match. */
  contractProblems: string[];
  /** Status for the next request; called with the request and how many came before it on its path. */
  respond: (request: ReceivedWebhook, seen: number) => number;
  waitFor(
    predicate: (received: ReceivedWebhook[]) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export class WebhookContractViolation extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Webhook bodies do not match WebhookEvent in docs/openapi.json:\n${problems.join('\n')}`);
    this.name = 'WebhookContractViolation';
    this.problems = problems;
  }
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const contractProblems: string[] = [];
  let reported = 0;
  /** Throws the problems not thrown yet (each is reported once). */
  const assertConforming = () => {
    if (contractProblems.length === reported) return;
    const fresh = contractProblems.slice(reported);
    reported = contractProblems.length;
    throw new WebhookContractViolation(fresh);
  };
  const receiver: Partial<WebhookReceiver> = { received, contractProblems, respond: () => 200 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry: ReceivedWebhook = {
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const seen = received.filter((earlier) => earlier.path === entry.path).length;
      received.push(entry);
      for (const problem of webhookEventProblems(entry.body))
        contractProblems.push(`${entry.path} (webhook-id ${String(entry.headers['webhook-id'])}) ${problem}`);
      response.statusCode = (receiver.respond as WebhookReceiver['respond'])(entry, seen);
      if (response.statusCode >= 300 && response.statusCode < 400)
        response.setHeader('location', '/elsewhere');
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    port,
    async waitFor(predicate: (list: ReceivedWebhook[]) => boolean, timeoutMs = 90_000) {
      // A body that breaks the contract ends the wait at once (vi.waitFor would retry past it).
      let violation: unknown;
      await vi.waitFor(
        () => {
          try {
            assertConforming();
          } catch (error) {
            violation = error;
            return;
          }
          if (!predicate(received))
            throw new Error(
              `webhook receiver: condition not met; got ${received.map((r) => `${r.path} ${r.headers['webhook-id']}`).join(', ')}`,
            );
        },
        { timeout: timeoutMs, interval: 100 },
      );
      if (violation !== undefined) throw violation;
      return received;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      assertConforming();
    },
  }) as WebhookReceiver;
}

/**
 * The Standard Webhooks v1 check written from the specification, without the library: one of the
 * space-separated `v1,<base64>` signatures must equal base64(HMAC-SHA256(base64-decoded secret,
 * "<webhook-id>.<webhook-timestamp>.<body>")).
 */
export function verifiesByHand(secret: string, request: ReceivedWebhook): boolean {
  const id = String(request.headers['webhook-id']);
  const timestamp = String(request.headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest();
  return String(request.headers['webhook-signature'])
    .split(' ')
    .some((entry) => {
      const [version, signature] = entry.split(',');
      if (version !== 'v1' || signature === undefined) return false;
      const given = Buffer.from(signature, 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
