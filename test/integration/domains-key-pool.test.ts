import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { describe, it } from 'vitest';
import { refillKeyPool } from '../../shared/domains/dkim/key-pool.ts';
import { openPrivateKey } from '../../shared/domains/dkim/key-store.ts';
import { listDkimKeys } from '../../shared/domains/dkim/store/dkim-keys.ts';
import { poolKeyIds, takePoolKey, takePoolKeyById } from '../../shared/domains/dkim/store/key-pool.ts';
import * as table from '../../shared/platform/table/gateway.ts';
import { keys } from '../../shared/platform/table/keys.ts';
import { call, mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

useHostEnvironment();

/**
 * The pool of RSA-2048 DKIM keys made ahead for domain add (docs/domains.md, "Key pool"): add takes
 * one with a conditional delete, stores it as a key generated on the spot is stored, and generates
 * one itself when the pool is empty. The test host runs no pool schedule: these tests fill it.
 */
async function poolItems(): Promise<Map<string, { id: string; ciphertext: string }>> {
  const items = await table.queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.dkimKeyPool },
  });
  return new Map(
    items.map((item) => [
      String(item.public_key),
      { id: String(item.sk).slice('KEY#'.length), ciphertext: String(item.private_key_ciphertext) },
    ]),
  );
}

async function poolPublicKeys(): Promise<Set<string>> {
  return new Set((await poolItems()).keys());
}

async function drainPool(): Promise<Set<string>> {
  const drained = new Set<string>();
  for (let taken = await takePoolKey(); taken !== undefined; taken = await takePoolKey()) {
    drained.add(taken.publicKey);
  }
  return drained;
}

async function addDomain(domain: string) {
  const token = await mintToken({ account: uniqueAccount('pool') });
  const response = await call('POST', '/domain/add-1.0', { token, body: { domain } });
  assert.equal(response.status, 200, response.text);
  return response.body.data.domain;
}

/** The domain's active key, as stored: its private key opens and is the pair of its public key. */
async function activeKey(domain: string) {
  const [key] = (await listDkimKeys(domain)).filter((entry) => entry.status === 'active');
  assert.ok(key !== undefined, `no active key for ${domain}`);
  const pem = await openPrivateKey(key);
  const derived = createPublicKey(pem).export({ type: 'spki', format: 'der' }).toString('base64');
  assert.equal(derived, key.publicKey, 'the stored private key is the pair of the published key');
  return key;
}

describe('DKIM key pool', () => {
  it('add takes a pooled key and stores it under the domain, its ciphertext as the pool sealed it', async () => {
    await refillKeyPool(10);
    const pooled = await poolItems();
    const domain = uniqueDomain('pooled');
    const view = await addDomain(domain);
    const key = await activeKey(domain);
    const source = pooled.get(key.publicKey);
    assert.ok(source !== undefined, 'the key came from the pool');
    assert.equal(key.poolKeyId, source.id, 'the key names the pool item its ciphertext was sealed for');
    assert.equal(key.privateKeyCiphertext, source.ciphertext, 'nothing decrypted and sealed again');
    assert.ok(!(await poolPublicKeys()).has(key.publicKey), 'and left it');
    const dkim = view.records.find((record: { purpose: string }) => record.purpose === 'dkim');
    assert.equal(dkim.value, `v=DKIM1; k=rsa; p=${key.publicKey}`);
  });

  it('two takes of the same key: exactly one gets it', async () => {
    await refillKeyPool(2);
    const [id] = await poolKeyIds(1);
    assert.ok(id !== undefined);
    const results = await Promise.all([takePoolKeyById(id), takePoolKeyById(id), takePoolKeyById(id)]);
    assert.equal(results.filter((result) => result !== undefined).length, 1);
  });

  it('concurrent adds never share a key', async () => {
    await refillKeyPool(8);
    const domains = Array.from({ length: 6 }, () => uniqueDomain('race'));
    await Promise.all(domains.map(addDomain));
    const publicKeys = await Promise.all(domains.map(async (domain) => (await activeKey(domain)).publicKey));
    assert.equal(new Set(publicKeys).size, domains.length);
  });

  it('an empty pool: add generates the key itself', async () => {
    const drained = await drainPool();
    assert.deepEqual(await poolKeyIds(1), []);
    const domain = uniqueDomain('inline');
    await addDomain(domain);
    const key = await activeKey(domain);
    assert.ok(!drained.has(key.publicKey));
    assert.equal(key.poolKeyId, undefined, 'sealed for the domain itself');
    assert.deepEqual(await poolKeyIds(1), [], 'nothing refilled on the request path');
  });

  it('refill tops the pool up to its size and no further', async () => {
    await drainPool();
    assert.deepEqual(await refillKeyPool(3), { found: 0, added: 3 });
    // Adds of other test files may take keys meanwhile: a refill replaces exactly those.
    const again = await refillKeyPool(3);
    assert.equal(again.found + again.added, 3);
    assert.ok((await poolKeyIds(10)).length <= 3);
  });
});
