import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { call, mintToken, uniqueAccount, uniqueDomain } from '../support/host.ts';
import { callFrom, type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';

/**
 * Two findings that need a host of their own (one secondary host, both configurations):
 * - the rate limit cannot be sidestepped with random tokens: RATE_LIMIT_RPS=0 makes the buckets
 *   refill never, so the counts below are exact whatever the machine's speed (the limit is per
 *   function instance, in-process: the secondary host runs every handler in one process);
 * - the account-wide message budget of batches holds across instances: the host is one instance,
 *   this test process (calling the budget's repository on the host's table) another;
 * - the optional token checks AUTH_REQUIRED_TYP / AUTH_REQUIRED_TOKEN_USE;
 * - a non-UTC SERVER_TZ (Asia/Kolkata, +05:30, no daylight saving) shows in every date, including
 *   the dates inside status_history details.
 */
const burst = 50;
const zoneOffset = '+05:30';
let host: SecondaryHost;

async function tokenFor(
  account: string,
  scopes?: readonly string[],
  claims: Record<string, unknown> = { token_use: 'access' },
): Promise<string> {
  return mintToken({
    account,
    ...(scopes === undefined ? {} : { scopes }),
    claims,
    signer: { ...host, issuer: host.env.AUTH_ISSUER ?? host.issuer },
  });
}

/** Failed authentications from 127.0.0.1 before the flood (they draw from the same address bucket). */
let failedBeforeFlood = 0;

/** A sending domain for a fresh account, registered in the secondary host's own table. */
async function accountWithDomain(): Promise<{ account: string; domain: string; token: string }> {
  const account = uniqueAccount('tz');
  const domain = uniqueDomain('tz');
  const { registerDomain } = await import('../../shared/domains/registry.ts');
  await registerDomain(domain, account);
  return { account, domain, token: await tokenFor(account) };
}

beforeAll(async () => {
  host = await startSecondaryHost({
    RATE_LIMIT_RPS: '0',
    RATE_LIMIT_BURST: String(burst),
    SERVER_TZ: 'Asia/Kolkata',
    DISPATCHER_INTERVAL_SECONDS: '2',
    AUTH_REQUIRED_TYP: 'JWT',
    AUTH_REQUIRED_TOKEN_USE: 'access',
    LOCAL_STATE: 'memory',
  });
  // This test process writes to the secondary host's emulators (domain registration).
  for (const [name, value] of Object.entries(host.env)) process.env[name] = value;
});

afterAll(async () => {
  await host?.stop();
});

describe('a non-UTC server time zone (SERVER_TZ=Asia/Kolkata)', () => {
  it('writes every date with +05:30, the dates inside status_history details included', async () => {
    const who = await accountWithDomain();
    const sendAt = new Date(Date.now() + 4_000).toISOString().replace('Z', '+00:00');
    const added = await call('POST', '/message/add-1.0', {
      baseUrl: host.url,
      token: who.token,
      body: {
        message_sender: `app@${who.domain}`,
        to: ['ada@recipient.test'],
        subject: 'Later',
        content: { kind: 'text_only', text: 'Hi' },
        scheduling: { mode: 'scheduled', send_at: sendAt },
      },
    });
    assert.equal(added.status, 200, added.text);
    const uuid = added.body.data.message_uuid as string;

    // The dispatcher (every 2 s here) releases it with a detail naming the send time.
    const details = await vi.waitFor(
      async () => {
        const response = await call('POST', '/message/query-1.0', {
          baseUrl: host.url,
          token: who.token,
          body: { message_uuid: uuid },
        });
        assert.equal(response.status, 200, response.text);
        const data = response.body.data;
        assert.ok(
          data.status_history.some((entry: { detail?: string }) => /scheduler/.test(entry.detail ?? '')),
          `released by the dispatcher: ${JSON.stringify(data.status_history)}`,
        );
        return data;
      },
      { timeout: 30_000, interval: 1_000 },
    );
    const released = details.status_history.find((entry: { detail?: string }) =>
      /scheduler/.test(entry.detail ?? ''),
    );
    assert.ok(released, `released by the dispatcher: ${JSON.stringify(details.status_history)}`);
    assert.match(released.detail, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+05:30/);
    assert.doesNotMatch(released.detail, /\d{2}(\.\d{3})?Z\b/, 'no UTC "Z" date inside the detail');
    for (const date of [
      details.created_at,
      details.updated_at,
      details.scheduling.send_at,
      ...details.status_history.map((entry: { at: string }) => entry.at),
    ]) {
      assert.ok(String(date).endsWith(zoneOffset), `${date} carries the server offset`);
    }
  });
});

describe('nothing accepted is lost: manual-wait is bounded', () => {
  it('fails a message still waiting when its hold ends, visibly, with a detail', async () => {
    const who = await accountWithDomain();
    const added = await call('POST', '/message/add-1.0', {
      baseUrl: host.url,
      token: who.token,
      body: {
        message_sender: `app@${who.domain}`,
        to: ['ada@recipient.test'],
        subject: 'Held',
        content: { kind: 'text_only', text: 'Hi' },
        scheduling: { mode: 'manual-wait' },
      },
    });
    assert.equal(added.status, 200, added.text);
    const uuid = added.body.data.message_uuid as string;
    // Thirty days pass: the message's due entry (the end of its hold) moves into the past.
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { dynamo } = await import('../../shared/platform/aws/dynamo.ts');
    const { tableName } = await import('../../shared/platform/config/storage.ts');
    const { keys } = await import('../../shared/platform/table/keys.ts');
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.message(uuid),
        // The due entry's sort key and the item's due time, as the work index keeps them (keys.ts).
        UpdateExpression: 'SET gsi3sk = :due, due_at = :at',
        ConditionExpression: 'begins_with(gsi3pk, :pk)',
        ExpressionAttributeValues: {
          ':due': `${new Date(Date.now() - 1000).toISOString()}#${uuid}`,
          ':at': new Date(Date.now() - 1000).toISOString(),
          ':pk': 'DUE#',
        },
      }),
    );
    const details = await vi.waitFor(
      async () => {
        const response = await call('POST', '/message/query-1.0', {
          baseUrl: host.url,
          token: who.token,
          body: { message_uuid: uuid },
        });
        const data = response.body.data;
        assert.notEqual(data.status, 'waiting', 'the hold has not ended yet');
        return data;
      },
      { timeout: 30_000, interval: 1_000 },
    );
    assert.equal(details.status, 'failed');
    const last = details.status_history.at(-1);
    assert.equal(last.status, 'failed');
    assert.match(last.detail, /held by manual-wait for 30 days/);
  });
});

describe('optional token checks (AUTH_REQUIRED_TYP=JWT, AUTH_REQUIRED_TOKEN_USE=access)', () => {
  it('refuses a token without the required token_use, or with another typ, with 110', async () => {
    const account = uniqueAccount('typ');
    const noUse = await call('POST', '/message/query-1.0', {
      baseUrl: host.url,
      token: await tokenFor(account, undefined, { token_use: 'id' }),
      body: {},
    });
    assert.equal(noUse.status, 401, noUse.text);
    assert.equal(noUse.body.error.code, 110);
    const key = await importJWK(host.privateJwk, 'RS256');
    const otherTyp = await new SignJWT({ scope: 'messages:read', token_use: 'access' })
      .setProtectedHeader({ alg: 'RS256', kid: host.privateJwk.kid as string, typ: 'id+jwt' })
      .setIssuer(host.env.AUTH_ISSUER ?? host.issuer)
      .setAudience(host.audience)
      .setSubject(account)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
    const typ = await call('POST', '/message/query-1.0', { baseUrl: host.url, token: otherTyp, body: {} });
    assert.equal(typ.status, 401, typ.text);
    assert.equal(typ.body.error.code, 110);
    failedBeforeFlood += 2;
    const good = await call('POST', '/message/query-1.0', {
      baseUrl: host.url,
      token: await tokenFor(account, ['messages:read']),
      body: {},
    });
    assert.equal(good.status, 200, good.text);
  });
});

describe('a rate limit that random tokens cannot sidestep', () => {
  // CPU-bound: 25 s on a quiet run, over a minute on a busy 2-core machine.
  it('limits 10,000 requests with random fake tokens from one address, while a real caller keeps its budget', {
    timeout: 240_000,
  }, async () => {
    const total = 10_000;
    const counts = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < total) {
        next += 1;
        const response = await fetch(new URL('/message/query-1.0', host.url), {
          method: 'POST',
          headers: {
            authorization: `Bearer ${randomBytes(24).toString('base64url')}.${randomBytes(48).toString('base64url')}.${randomBytes(32).toString('base64url')}`,
            'content-type': 'application/json',
          },
          body: '{}',
        });
        await response.arrayBuffer();
        counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const unauthorized = counts.get(401) ?? 0;
    const limited = counts.get(429) ?? 0;
    assert.equal(unauthorized + limited, total, `only 401 and 429: ${JSON.stringify([...counts])}`);
    const budget = burst - failedBeforeFlood;
    assert.equal(unauthorized, budget, 'the address had exactly its burst of failed authentications');
    assert.equal(limited, total - budget);

    // A real caller from the same address: its bucket is its account's, full and untouched.
    const realAccount = uniqueAccount('real');
    const token = await tokenFor(realAccount, ['messages:read']);
    for (let request = 0; request < burst; request++) {
      const response = await call('POST', '/message/query-1.0', {
        baseUrl: host.url,
        token,
        body: { filters: { limit: 1 } },
      });
      assert.equal(response.status, 200, `request ${request + 1} of ${burst}: ${response.text}`);
    }
    const over = await call('POST', '/message/query-1.0', { baseUrl: host.url, token, body: {} });
    assert.equal(over.status, 429, 'and the account is limited once its own burst is spent');

    // Tokenless requests of the flooding address are limited too; another address is not.
    const flooder = await callFrom('127.0.0.1', host.url, 'GET', '/health');
    assert.equal(flooder.status, 429);
    const neighbour = await callFrom('127.0.0.5', host.url, 'GET', '/health');
    assert.equal(neighbour.status, 200);
  });
});

describe('rate limits count messages: a batch pays one token per message', () => {
  it('admits a batch while the bucket is not empty, takes it into debt, and the next requests wait', async () => {
    const who = await accountWithDomain();
    const message = {
      message_sender: `app@${who.domain}`,
      to: ['ada@recipient.test'],
      subject: 'Held',
      content: { kind: 'text_only', text: 'Hi' },
      scheduling: { mode: 'manual-wait' },
    };
    const send = (path: string, body: unknown) =>
      call('POST', path, { baseUrl: host.url, token: who.token, body });
    // 48 single requests leave 2 of the 50 tokens (the rate is 0: nothing refills).
    for (let request = 0; request < burst - 2; request++)
      assert.equal((await send('/message/add-1.0', message)).status, 200);
    // A bucket that is not empty admits a batch of any size; it pays for every message.
    const batch = await send('/message/batch-1.0', { messages: Array.from({ length: 30 }, () => message) });
    assert.equal(batch.status, 200, batch.text);
    assert.equal(batch.body.data.accepted, 30);
    assert.equal(batch.headers.get('ratelimit-remaining'), '0');
    // 2 − 30 = −28: in debt. Every next request of the account waits, on either route.
    for (const path of ['/message/batch-1.0', '/message/add-1.0']) {
      const next = await send(path, path.endsWith('batch-1.0') ? { messages: [message] } : message);
      assert.equal(next.status, 429, next.text);
      assert.equal(next.body.error.code, 115);
    }
  });

  it('shares one budget per account across instances: after one instance took the account into debt, a batch through another is 115', async () => {
    // This test process is a second function instance: its own module state (no bucket of the
    // host's), the host's table. The rate is 0, so the counts are exact whatever the machine's speed.
    const { chargeMessageBudget } = await import('../../shared/platform/rate-limit/message-budget-store.ts');
    const policy = { rate: 0, burst };
    const message = (domain: string) => ({
      message_sender: `app@${domain}`,
      to: ['ada@recipient.test'],
      subject: 'Held',
      content: { kind: 'text_only', text: 'Hi' },
      scheduling: { mode: 'manual-wait' },
    });

    // The host's batch of burst + 10 takes the account 10 into debt; the other instance sees it.
    const first = await accountWithDomain();
    const batch = await call('POST', '/message/batch-1.0', {
      baseUrl: host.url,
      token: first.token,
      body: { messages: Array.from({ length: burst + 10 }, () => message(first.domain)) },
    });
    assert.equal(batch.status, 200, batch.text);
    assert.equal(batch.body.data.accepted, burst + 10);
    const elsewhere = await chargeMessageBudget(first.account, 1, { policy });
    assert.equal(elsewhere.allowed, false, 'the other instance refuses the account in debt');
    assert.equal(elsewhere.remaining, 0);
    assert.equal(elsewhere.retryAfterSeconds, 60, 'nothing refills at rate 0');

    // The other way round: the other instance takes a second account into debt. The host's own
    // bucket for that account is full, and yet its batch is refused, with the usual headers.
    const second = await accountWithDomain();
    assert.equal((await chargeMessageBudget(second.account, burst + 10, { policy })).allowed, true);
    const refused = await call('POST', '/message/batch-1.0', {
      baseUrl: host.url,
      token: second.token,
      body: { messages: [message(second.domain)] },
    });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.error.code, 115);
    assert.equal(refused.headers.get('retry-after'), '60');
    assert.equal(refused.headers.get('ratelimit-limit'), String(burst));
    assert.equal(refused.headers.get('ratelimit-remaining'), '0');
    // An add does not draw from the shared budget (one message a request: the WAF per-token rule
    // bounds it on AWS): the host's bucket admits it, having lost one token to the refused batch
    // request and none to its message.
    const added = await call('POST', '/message/add-1.0', {
      baseUrl: host.url,
      token: second.token,
      body: message(second.domain),
    });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.headers.get('ratelimit-remaining'), String(burst - 2));
  });

  it('concurrent charges of one account never admit more than its budget', async () => {
    const { chargeMessageBudget } = await import('../../shared/platform/rate-limit/message-budget-store.ts');
    const policy = { rate: 0, burst };
    const account = uniqueAccount('budget');
    // 20 batches of 10 at once against a budget of 50: each admitted one finds a whole token, so
    // exactly those that find 50, 40, 30, 20 and 10 tokens left pass, in whatever order they land.
    const decisions = await Promise.all(
      Array.from({ length: 20 }, () => chargeMessageBudget(account, 10, { policy })),
    );
    assert.equal(decisions.filter((decision) => decision.allowed).length, 5);
    assert.equal((await chargeMessageBudget(account, 1, { policy })).allowed, false);
  });
});
