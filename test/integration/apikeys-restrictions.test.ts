import assert from 'node:assert/strict';
import { describe, expect, it } from 'vitest';
import { registerDomain } from '../../shared/domains/registry.ts';
import { makeKey, whoami } from '../support/apikeys.ts';
import { call, mintToken, uniqueDomain, useHostEnvironment } from '../support/host.ts';
import { newAccount, textMessage } from '../support/messages.ts';

useHostEnvironment();

/** Long enough for every instance's 30 s key cache to expire, with room for a loaded machine. */
const cacheExpiry = { timeout: 45_000, interval: 1_000 };

const codeOf = (answer: { body: any }) => answer.body?.error?.code;

async function addKey(token: string, body: Record<string, unknown>) {
  return call('POST', '/apikey/add-1.0', { token, body: { name: 'k', ...body } });
}

describe('API key restrictions, each with its code', () => {
  it('refuses bad input with 107 and details', async () => {
    const who = await newAccount('keyr');
    const cases: Record<string, unknown>[] = [
      { scopes: ['messages:fly'] },
      { preset: 'everything' },
      { scopes: ['messages:send'], preset: 'sending_access' },
      { domains: Array.from({ length: 11 }, (_, index) => `d${index}.test`) },
      { allowed_cidrs: Array.from({ length: 11 }, (_, index) => `10.0.${index}.0/24`) },
      { allowed_cidrs: ['10.0.0.0/33'] },
      { domains: [uniqueDomain('foreign')] },
      { expires_at: '2020-01-01T00:00:00Z' },
      { name: 'x'.repeat(101) },
      { grace: 1 },
    ];
    for (const body of cases) {
      const answer = await addKey(who.token, body);
      assert.equal(answer.status, 406, `${JSON.stringify(body)}: ${answer.text}`);
      assert.equal(codeOf(answer), 107, JSON.stringify(body));
      assert.ok(answer.body.error.details?.length > 0, JSON.stringify(body));
    }
  });

  it('never grants a scope the caller lacks (113); presets resolve to scopes', async () => {
    const who = await newAccount('keyr');
    const narrow = await mintToken({ account: who.account, scopes: ['keys:write', 'messages:send'] });
    const beyond = await addKey(narrow, { scopes: ['messages:read'] });
    assert.equal(codeOf(beyond), 113, beyond.text);
    const full = await addKey(narrow, { preset: 'full_access' });
    assert.deepEqual(full.body.data.api_key.scopes, ['keys:write', 'messages:send']);
    const sending = await addKey(narrow, { preset: 'sending_access' });
    assert.deepEqual(sending.body.data.api_key.scopes, ['messages:send']);

    // A key with keys:write makes keys no wider than itself.
    const maker = (await makeKey(who, { scopes: ['keys:write', 'messages:read'] })).key;
    assert.equal(codeOf(await addKey(maker, { scopes: ['messages:send'] })), 113);
    const made = await addKey(maker, { scopes: ['messages:read'] });
    assert.equal(made.status, 200, made.text);
  });

  it('a key restricted to a domain sends from and reads only that domain (113 elsewhere)', async () => {
    const who = await newAccount('keyr');
    const other = uniqueDomain('keyr');
    await registerDomain(other, who.account);
    const { key, api_key } = await makeKey(who, { domains: [who.domain.toUpperCase()] });
    assert.deepEqual(api_key.domains, [who.domain]);

    const own = await call('POST', '/message/add-1.0', { token: key, body: textMessage(who) });
    assert.equal(own.status, 200, own.text);
    const elsewhere = await call('POST', '/message/add-1.0', {
      token: key,
      body: textMessage(who, { message_sender: `noreply@${other}` }),
    });
    assert.equal(codeOf(elsewhere), 113, elsewhere.text);
    const batch = await call('POST', '/message/batch-1.0', {
      token: key,
      body: { messages: [textMessage(who, { message_sender: `noreply@${other}` })] },
    });
    assert.ok(batch.status === 113 || JSON.stringify(batch.body).includes('"code":113'), batch.text);

    const ownDkim = await call('GET', '/domain/dkim/status-1.0', {
      token: key,
      query: { domain: who.domain },
    });
    assert.notEqual(codeOf(ownDkim), 113, ownDkim.text);
    const otherDkim = await call('GET', '/domain/dkim/status-1.0', { token: key, query: { domain: other } });
    assert.equal(codeOf(otherDkim), 113, otherDkim.text);
    const setOther = await call('POST', '/domain/dkim/set-algorithm-1.0', {
      token: key,
      body: { domain: other, algorithm: 'ed25519-sha256' },
    });
    assert.equal(codeOf(setOther), 113, setOther.text);

    assert.deepEqual((await whoami(key)).body.data.domains, [who.domain]);
    // A restricted key cannot make an unrestricted one, nor one for another domain.
    assert.deepEqual((await addKey(key, {})).body.data.api_key.domains, [who.domain]);
    assert.equal(codeOf(await addKey(key, { domains: [other] })), 113);
  });

  it('answers 103 outside the allowed networks', async () => {
    const who = await newAccount('keyr');
    const elsewhere = await makeKey(who, { allowed_cidrs: ['192.0.2.0/24', '2001:db8::/32'] });
    const refused = await whoami(elsewhere.key);
    assert.equal(refused.status, 401, refused.text);
    assert.equal(codeOf(refused), 103);
    const here = await makeKey(who, { allowed_cidrs: ['127.0.0.0/8'] });
    assert.equal((await whoami(here.key)).status, 200);
  });

  it('answers 105 once the key has expired', async () => {
    const who = await newAccount('keyr');
    const { key } = await makeKey(who, { expires_at: new Date(Date.now() + 3_000).toISOString() });
    assert.equal((await whoami(key)).status, 200);
    await expect.poll(async () => codeOf(await whoami(key)), { timeout: 30_000, interval: 500 }).toBe(105);
  });

  it('a revoked key is refused (110) within 30 s', async () => {
    const who = await newAccount('keyr');
    const { key, api_key } = await makeKey(who);
    assert.equal((await whoami(key)).status, 200);
    const revoked = await call('POST', '/apikey/revoke-1.0', {
      token: who.token,
      body: { key_id: api_key.key_id },
    });
    assert.equal(revoked.status, 200, revoked.text);
    assert.match(revoked.body.data.api_key.revoked_at, /^\d{4}-/);
    await expect.poll(async () => codeOf(await whoami(key)), cacheExpiry).toBe(110);
    const again = await call('POST', '/apikey/rotate-1.0', {
      token: who.token,
      body: { key_id: api_key.key_id },
    });
    assert.equal(codeOf(again), 111, again.text);
  });

  it('rotation: the old secret works for the grace period, then 110; the new one at once', async () => {
    const who = await newAccount('keyr');
    const { key: first, api_key } = await makeKey(who);
    const graceful = await call('POST', '/apikey/rotate-1.0', {
      token: who.token,
      body: { key_id: api_key.key_id, grace_seconds: 3600 },
    });
    assert.equal(graceful.status, 200, graceful.text);
    const second = graceful.body.data.key as string;
    assert.notEqual(second, first);
    assert.ok(second.startsWith(`svc_live_${api_key.key_id}_`));
    assert.equal((await whoami(second)).status, 200);
    assert.equal((await whoami(first)).status, 200);

    const abrupt = await call('POST', '/apikey/rotate-1.0', {
      token: who.token,
      body: { key_id: api_key.key_id, grace_seconds: 0 },
    });
    const third = abrupt.body.data.key as string;
    assert.equal((await whoami(third)).status, 200);
    await expect.poll(async () => codeOf(await whoami(second)), cacheExpiry).toBe(110);
    // The first secret's grace ended with the second rotation: only one previous secret is kept.
    assert.equal(codeOf(await whoami(first)), 110);
    const tooLong = await call('POST', '/apikey/rotate-1.0', {
      token: who.token,
      body: { key_id: api_key.key_id, grace_seconds: 604_801 },
    });
    assert.equal(codeOf(tooLong), 107);
  });

  it("a key's own rate limit answers 115 and spends no other key's budget", async () => {
    const who = await newAccount('keyr');
    const slow = await makeKey(who, { rate_limit_rps: 1 });
    const other = await makeKey(who);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => call('GET', '/whoami-1.0', { token: slow.key })),
    );
    assert.ok(
      answers.some((answer) => codeOf(answer) === 115),
      answers.map((a) => a.status).join(','),
    );
    assert.equal((await whoami(other.key)).status, 200);
    assert.equal((await whoami(who.token)).status, 200);
  });

  it('last_used_at is written on use, and not again within the minute', async () => {
    const who = await newAccount('keyr');
    const { key, api_key } = await makeKey(who);
    assert.equal(api_key.last_used_at, null);
    await whoami(key);
    const read = async () =>
      (await call('POST', '/apikey/query-1.0', { token: who.token, body: { key_id: api_key.key_id } })).body
        .data.api_key.last_used_at;
    // Written beside the request: it lands shortly after the answer.
    await expect.poll(read, { timeout: 30_000 }).not.toBeNull();
    const first = await read();
    assert.match(first, /^\d{4}-/);
    await whoami(key);
    await whoami(key);
    assert.equal(await read(), first);
  });

  it('query of a key of another account is 112', async () => {
    const who = await newAccount('keyr');
    const stranger = await newAccount('keyr');
    const { api_key } = await makeKey(who);
    for (const path of ['/apikey/query-1.0', '/apikey/revoke-1.0', '/apikey/rotate-1.0']) {
      const answer = await call('POST', path, { token: stranger.token, body: { key_id: api_key.key_id } });
      assert.equal(codeOf(answer), 112, `${path}: ${answer.text}`);
    }
  });
});
