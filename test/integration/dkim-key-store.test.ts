import assert from 'node:assert/strict';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, it } from 'vitest';
import { openPrivateKey } from '../../shared/domains/dkim/key-store.ts';
import { getActiveSigningKey } from '../../shared/domains/dkim/signing-keys.ts';
import { getDkimKey, listDkimKeys } from '../../shared/domains/dkim/store/dkim-keys.ts';
import { registerDomain, unregisterDomain } from '../../shared/domains/registry.ts';
import { getDomain } from '../../shared/domains/store/domains.ts';
import { dynamo } from '../../shared/platform/aws/clients.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { keys } from '../../shared/platform/table/keys.ts';
import { uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

describe('DKIM key store', () => {
  beforeAll(() => {
    useHostEnvironment();
  });

  it('registering creates one active rsa-sha256 key, stored encrypted; registering again adds none', async () => {
    const account = uniqueAccount('ks');
    const domain = uniqueDomain('ks');
    assert.equal(await registerDomain(domain, account), 'registered');
    assert.equal(await registerDomain(domain, account), 'already-registered');
    assert.equal(await registerDomain(domain, uniqueAccount('other')), 'owned-by-another-account');

    const stored = await listDkimKeys(domain);
    assert.equal(stored.length, 1);
    const [key] = stored;
    assert.equal(key?.status, 'active');
    assert.equal(key?.algorithm, 'rsa-sha256');
    assert.equal((await getDomain(domain))?.activeSelector, key?.selector);

    const signing = await getActiveSigningKey(domain.toUpperCase());
    assert.ok(signing);
    assert.deepEqual(
      { domain: signing.domain, selector: signing.selector, algorithm: signing.algorithm },
      { domain, selector: key?.selector, algorithm: 'rsa-sha256' },
    );
    assert.match(signing.privateKeyPem, /^-----BEGIN PRIVATE KEY-----\n/);

    // At rest the item holds only the Encryption SDK message, never the key itself.
    const raw = await dynamo().send(
      new GetCommand({ TableName: tableName(), Key: keys.dkimKey(domain, signing.selector) }),
    );
    const item = JSON.stringify(raw.Item);
    const pemBody = signing.privateKeyPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
    assert.ok(!item.includes('PRIVATE KEY'));
    assert.ok(!item.includes(pemBody.slice(40, 100)));
    assert.ok(typeof raw.Item?.private_key_ciphertext === 'string');
  });

  it('refuses a ciphertext moved to another key item (encryption context)', async () => {
    const first = uniqueDomain('ks');
    const second = uniqueDomain('ks');
    await registerDomain(first, uniqueAccount('ks'));
    await registerDomain(second, uniqueAccount('ks'));
    const [a] = await listDkimKeys(first);
    const [b] = await listDkimKeys(second);
    assert.ok(a && b);
    assert.match(await openPrivateKey(a), /PRIVATE KEY/);
    await assert.rejects(openPrivateKey({ ...b, privateKeyCiphertext: a.privateKeyCiphertext }));
  });

  it('removing a domain removes its keys; the next owner starts with a fresh key', async () => {
    const domain = uniqueDomain('ks');
    await registerDomain(domain, uniqueAccount('ks'));
    const [old] = await listDkimKeys(domain);
    assert.ok(old);
    assert.equal(await unregisterDomain(domain), true);
    assert.deepEqual(await listDkimKeys(domain), []);
    assert.equal(await getActiveSigningKey(domain), undefined);

    await registerDomain(domain, uniqueAccount('next'));
    const fresh = await listDkimKeys(domain);
    assert.equal(fresh.length, 1);
    assert.notEqual(fresh[0]?.selector, old.selector);
    assert.equal(await getDkimKey(domain, old.selector), undefined);
  });

  it('has no signing key for an unknown domain', async () => {
    assert.equal(await getActiveSigningKey(uniqueDomain('none')), undefined);
  });
});
