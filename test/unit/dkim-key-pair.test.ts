import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { describe, it } from 'vitest';
import { generateDkimKeyPair } from '../../shared/domains/dkim/key-pair.ts';

describe('DKIM key pairs', () => {
  it('RSA: p= is the SPKI DER of the private key’s public half, 2048 bits', async () => {
    const pair = await generateDkimKeyPair('rsa-sha256');
    const publicKey = createPublicKey(pair.privateKeyPem);
    assert.equal(publicKey.asymmetricKeyDetails?.modulusLength, 2048);
    assert.equal(publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), pair.publicKey);
    assert.match(pair.privateKeyPem, /^-----BEGIN PRIVATE KEY-----/);
  });

  it('Ed25519: p= is the raw 32-byte key (RFC 8463), the tail of its SPKI', async () => {
    const pair = await generateDkimKeyPair('ed25519-sha256');
    const spki = createPublicKey(pair.privateKeyPem).export({ type: 'spki', format: 'der' });
    const raw = Buffer.from(pair.publicKey, 'base64');
    assert.equal(raw.length, 32);
    assert.deepEqual(raw, spki.subarray(-32));
  });
});
