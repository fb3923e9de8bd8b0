import { randomBytes } from 'node:crypto';
import { type EncryptionContext, openSecret, sealSecret } from '../aws/key-envelope.ts';
import { generateDkimKeyPair } from '../crypto/dkim-key-pair.ts';
import { type DkimAlgorithm, defaultDkimAlgorithm, newSelector } from '../domain/dkim.ts';
import { log } from '../observability/log.ts';
import { activateDkimKey, type StoredDkimKey } from '../repositories/dkim-keys.ts';
import { getDomain } from '../repositories/domains.ts';

/**
 * The key store: creates key pairs, keeps their private halves only as envelope-encrypted
 * ciphertext, and opens them for signing. Private keys never leave this module except as the return
 * value of openPrivateKey (for the signer).
 */
function encryptionContext(domain: string, selector: string): EncryptionContext {
  return { purpose: 'svc-mail-dkim-private-key', domain, selector };
}

export interface NewDkimKey {
  selector: string;
  algorithm: DkimAlgorithm;
  createdAt: string;
}

/**
 * Generates a key pair, encrypts the private key and makes the key the domain's active one,
 * retiring `previousSelector` in the same transaction.
 */
export async function createActiveDkimKey(
  domain: string,
  accountId: string,
  algorithm: DkimAlgorithm,
  previousSelector: string | undefined,
  now: Date = new Date(),
): Promise<NewDkimKey> {
  const selector = newSelector(algorithm, now, randomBytes(3).toString('hex'));
  const pair = await generateDkimKeyPair(algorithm);
  const privateKeyCiphertext = await sealSecret(
    Buffer.from(pair.privateKeyPem, 'utf8'),
    encryptionContext(domain, selector),
  );
  const createdAt = now.toISOString();
  await activateDkimKey({
    key: { domain, selector, algorithm, publicKey: pair.publicKey, privateKeyCiphertext, createdAt },
    accountId,
    previousSelector,
  });
  log('info', 'dkim key activated', { domain, selector, algorithm, previousSelector });
  return { selector, algorithm, createdAt };
}

/**
 * Gives a registered domain without an active key its first key (rsa-sha256), so its mail is
 * signed from the first message. A domain that has a key is left as it is.
 */
export async function ensureActiveDkimKey(domain: string, now: Date = new Date()): Promise<boolean> {
  const record = await getDomain(domain);
  if (record === undefined || record.activeSelector !== undefined) return false;
  await createActiveDkimKey(record.domain, record.accountId, defaultDkimAlgorithm, undefined, now);
  return true;
}

/** The PKCS#8 PEM of a stored key. For the signer only; never log or return it. */
export async function openPrivateKey(key: StoredDkimKey): Promise<string> {
  const plaintext = await openSecret(key.privateKeyCiphertext, encryptionContext(key.domain, key.selector));
  return plaintext.toString('utf8');
}
