import assert from 'node:assert/strict';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, it } from 'vitest';
import { maxNewKeysPerDay, maxRetiredKeySets } from '../../shared/domains/dkim/model/dkim.ts';
import { listDkimKeys } from '../../shared/domains/dkim/store/dkim-keys.ts';
import { registerDomain } from '../../shared/domains/registry.ts';
import { dynamo } from '../../shared/platform/aws/clients.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { keys } from '../../shared/platform/table/keys.ts';
import { call, mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

/**
 * DKIM rotations are bounded, so no caller can grow its own DKIM answers without limit (before, every
 * set-algorithm call added keys kept and listed for 30 days, until the answer outgrew Lambda's 6 MB):
 * at most `maxNewKeysPerDay` new keys per domain in 24 hours (115 with the next allowed time), and at
 * most `maxRetiredKeySets` retired keys kept (older ones retire for good at the next rotation).
 */
useHostEnvironment();

async function ownDomain() {
  const account = uniqueAccount('dkimcap');
  const domain = uniqueDomain('dkimcap');
  await registerDomain(domain, account);
  return { domain, token: await mintToken({ account, scopes: ['domains:read', 'domains:write'] }) };
}

const rotate = (token: string, domain: string, algorithm: string, dryRun = false) =>
  call('POST', '/domain/dkim/set-algorithm-1.0', {
    token,
    body: { domain, algorithm },
    ...(dryRun ? { query: { dry_run: 'true' } } : {}),
  });

/** Moves every key of the domain two days back, as if its rotations had happened the day before yesterday. */
async function backdate(domain: string): Promise<void> {
  const twoDays = 2 * 24 * 3600 * 1000;
  for (const key of await listDkimKeys(domain)) {
    const at = (iso: string) => new Date(Date.parse(iso) - twoDays).toISOString();
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.dkimKey(domain, key.selector),
        UpdateExpression:
          key.retiredAt === undefined
            ? 'SET created_at = :created'
            : 'SET created_at = :created, retired_at = :retired',
        ExpressionAttributeValues: {
          ':created': at(key.createdAt),
          ...(key.retiredAt === undefined ? {} : { ':retired': at(key.retiredAt) }),
        },
      }),
    );
  }
}

describe('DKIM rotation bounds', () => {
  it(`at most ${maxNewKeysPerDay} new keys per domain in 24 hours; then 115 with the next allowed time, also for a dry run`, async () => {
    const { domain, token } = await ownDomain();
    // The key made at registration counts: nine rotations reach the limit.
    for (let index = 1; index < maxNewKeysPerDay; index++) {
      const response = await rotate(token, domain, index % 2 === 1 ? 'ed25519-sha256' : 'rsa-sha256');
      assert.equal(response.status, 200, response.text);
    }
    for (const dryRun of [false, true]) {
      const refused = await rotate(token, domain, 'rsa-sha256', dryRun);
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.body.error.code, 115);
      assert.equal(refused.body.error.details[0].field, 'domain');
      assert.match(
        refused.body.error.details[0].message,
        /At most 10 new DKIM keys per domain in 24 hours; the next is allowed at \d{4}-/,
      );
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(retryAfter > 23 * 3600 && retryAfter <= 24 * 3600, `retry-after ${retryAfter}`);
    }
    // Nothing changed by the refused calls; reading stays allowed.
    const status = await call('GET', '/domain/dkim/status-1.0', { token, query: { domain } });
    assert.equal(status.status, 200);
    assert.equal(
      status.body.data.dkim_keys.filter((key: { status: string }) => key.status === 'active').length,
      2,
      'the last rotation (Ed25519 and its RSA companion) is the active one',
    );
  });

  it(`keeps at most ${maxRetiredKeySets} retired key sets; older ones leave the list at the next rotation`, async () => {
    const { domain, token } = await ownDomain();
    // Yesterday's rotations (Ed25519 with companions), then today's: more sets than are kept.
    for (let index = 1; index < maxNewKeysPerDay; index++) {
      assert.equal((await rotate(token, domain, 'ed25519-sha256')).status, 200);
    }
    await backdate(domain);
    for (let index = 0; index < 4; index++) {
      assert.equal((await rotate(token, domain, 'rsa-sha256')).status, 200);
    }
    const answer = (await rotate(token, domain, 'rsa-sha256')).body.data.dkim_keys as Array<{
      selector: string;
      status: string;
      algorithm: string;
      retired_at?: string;
    }>;
    const status = (await call('GET', '/domain/dkim/status-1.0', { token, query: { domain } })).body.data
      .dkim_keys as typeof answer;
    for (const listed of [answer, status]) {
      assert.equal(listed.filter((key) => key.status === 'active').length, 1);
      const retired = listed.filter((key) => key.status === 'retired');
      // 15 sets were made (the first at registration): 14 are retired, and the newest 10 stay (4
      // RSA keys of today, then 6 Ed25519 keys with their companions); the oldest 4 are gone, with
      // their companions.
      const rsa = retired.filter((key) => key.algorithm === 'rsa-sha256').length;
      const ed25519 = retired.filter((key) => key.algorithm === 'ed25519-sha256').length;
      assert.equal(ed25519, 6);
      assert.equal(rsa, 4 + 6, 'four of today, six companions of the kept Ed25519 keys');
      assert.ok(listed.length <= 2 * (maxRetiredKeySets + 1), `bounded list: ${listed.length}`);
    }
  });
});
