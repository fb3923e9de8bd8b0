import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, it } from 'vitest';
import { addKey } from '../../shared/apikeys/add.ts';
import { setAccountActive } from '../../shared/platform/auth/account-store.ts';
import { dynamo } from '../../shared/platform/aws/clients.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import * as table from '../../shared/platform/table/gateway.ts';
import { keys } from '../../shared/platform/table/keys.ts';
import { makeKey, whoami } from '../support/apikeys.ts';
import { call, hostInfo, uniqueAccount, useHostEnvironment } from '../support/host.ts';
import { newAccount, textMessage } from '../support/messages.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

useHostEnvironment();

const keyShape = /^svc_live_([a-z2-7]{16})_([A-Za-z0-9_-]{43})$/;

describe('API keys: made once, accepted by the one chain', () => {
  it('answers the key once, stores only its digest, and the key sends mail', async () => {
    const who = await newAccount('key');
    const made = await makeKey(who, { name: 'app' });
    const match = keyShape.exec(made.key);
    assert.ok(match, made.key);
    const [, keyId, secret] = match as unknown as [string, string, string];
    assert.equal(made.api_key.key_id, keyId);
    assert.equal(made.api_key.prefix, `svc_live_${keyId}`);
    assert.equal(made.api_key.last4, secret.slice(-4));
    assert.deepEqual(Object.keys(made.api_key).sort(), [
      'allowed_cidrs',
      'created_at',
      'domains',
      'expires_at',
      'key_id',
      'last4',
      'last_used_at',
      'name',
      'prefix',
      'revoked_at',
      'scopes',
    ]);

    const sent = await call('POST', '/message/add-1.0', { token: made.key, body: textMessage(who) });
    assert.equal(sent.status, 200, sent.text);

    const me = await whoami(made.key);
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.data.account, who.account);
    assert.equal(me.body.data.credential, 'api_key');
    assert.equal(me.body.data.key_id, keyId);
    assert.deepEqual(me.body.data.domains, [who.domain]);

    const listed = await call('POST', '/apikey/query-1.0', { token: who.token, body: {} });
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.data.count, 1);
    assert.equal(JSON.stringify(listed.body).includes(secret), false);

    // The secret is nowhere in the table and nowhere in the service's log, only its digest is stored.
    // Every page of the table: the shared host's table holds every other test's items too.
    const items: Array<Record<string, any>> = [];
    let start: Record<string, any> | undefined;
    do {
      const page = await dynamo().send(
        new ScanCommand({
          TableName: tableName(),
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    assert.equal(JSON.stringify(items).includes(secret), false);
    const item = items.find((entry) => entry.pk === keys.apiKey(keyId).pk);
    assert.ok(item);
    assert.match(String(item.digest), /^[A-Za-z0-9_-]{43}$/);
    const log = await readFile(hostInfo().logFile, 'utf8');
    assert.equal(log.includes(secret), false);
  });

  it('whoami of a JWT names the credential and the account domains', async () => {
    const who = await newAccount('key');
    const me = await whoami(who.token);
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.data.credential, 'jwt');
    assert.equal(me.body.data.key_id, undefined);
    assert.deepEqual(me.body.data.domains, [who.domain]);
    assert.ok(me.body.data.scopes.includes('keys:write'));
  });

  it('answers 110 for a malformed, unknown or wrong key, never a 5xx', async () => {
    const who = await newAccount('key');
    const made = await makeKey(who);
    const [, keyId] = keyShape.exec(made.key) as unknown as [string, string];
    const wrongSecret = `svc_live_${keyId}_${'A'.repeat(43)}`;
    const unknownKey = `svc_live_${'a'.repeat(16)}_${'B'.repeat(43)}`;
    for (const token of ['svc_live_short', 'svc_test_x', `${made.key}x`, wrongSecret, unknownKey, 'svc_']) {
      const answer = await whoami(token);
      assert.equal(answer.status, 401, `${token}: ${answer.text}`);
      assert.equal(answer.body.error.code, 110, token);
    }
  });

  it('refuses a disabled account key with 110', async () => {
    // Made here, so the host has never seen the account active (its status is cached for 30 s).
    const account = uniqueAccount('key-off');
    const made = await addKey(
      { account, subject: account, scopes: new Set(['messages:send']), credential: 'jwt' },
      { name: 'off' },
    );
    await setAccountActive(account, false);
    const answer = await whoami(made.key);
    assert.equal(answer.status, 401, answer.text);
    assert.equal(answer.body.error.code, 110);
    assert.match(answer.body.error.message, /disabled/);
  });

  it('refuses a key made while its account was being disabled, and lifts the mark on enable', async () => {
    const account = uniqueAccount('key-late');
    const caller = {
      account,
      subject: account,
      scopes: new Set(['messages:send']),
      credential: 'jwt' as const,
    };
    const before = await addKey(caller, { name: 'before' });
    await setAccountActive(account, false);
    // A key put after the disable's pass over the account's keys (its maker's status was cached).
    const after = await addKey(caller, { name: 'after' });
    for (const made of [before, after]) {
      const answer = await whoami(made.key);
      assert.equal(answer.status, 401, answer.text);
      assert.equal(answer.body.error.code, 110);
      assert.match(answer.body.error.message, /disabled/);
    }
    await setAccountActive(account, true);
    for (const made of [before, after]) {
      const item = await table.get(keys.apiKey(made.api_key.key_id), { ConsistentRead: true });
      assert.equal(item?.account_id, account);
      assert.equal(item?.account_disabled, undefined, made.api_key.key_id);
    }
  });

  it('announces key.created, key.rotated and key.revoked to webhooks, without the secret', async () => {
    const who = await newAccount('key');
    const receiver = await startWebhookReceiver();
    try {
      const endpoint = await call('POST', '/webhook/add-1.0', {
        token: who.token,
        body: { url: `${receiver.url}/keys`, events: ['key.created', 'key.rotated', 'key.revoked'] },
      });
      assert.equal(endpoint.status, 200, endpoint.text);
      const made = await makeKey(who, { name: 'announced' });
      const keyId = made.api_key.key_id as string;
      const rotated = await call('POST', '/apikey/rotate-1.0', { token: who.token, body: { key_id: keyId } });
      await call('POST', '/apikey/revoke-1.0', { token: who.token, body: { key_id: keyId } });
      const ofKey = (list: { body: string }[]) =>
        list.map((entry) => JSON.parse(entry.body)).filter((event) => event.data.key_id === keyId);
      const events = ofKey(await receiver.waitFor((list) => ofKey(list).length >= 3));
      assert.deepEqual(events.map((event) => event.type).sort(), [
        'key.created',
        'key.revoked',
        'key.rotated',
      ]);
      for (const event of events) {
        assert.deepEqual(event.data, { key_id: keyId, name: 'announced', prefix: `svc_live_${keyId}` });
      }
      const bodies = receiver.received.map((entry) => entry.body).join('\n');
      for (const key of [made.key, rotated.body.data.key as string]) {
        assert.equal(bodies.includes(key.slice(-43)), false);
      }
    } finally {
      await receiver.close();
    }
  });
});
