import { randomBytes } from 'node:crypto';
import { type EncryptionContext, openSecret, sealSecret } from '../../platform/aws/key-envelope.ts';
import { envNumber } from '../../platform/config/env.ts';
import { describeError, log } from '../../platform/observability/log.ts';
import { getDomain } from '../store/domains.ts';
import { type DkimKeyPair, generateDkimKeyPair } from './key-pair.ts';
import {
  companionAlgorithm,
  type DkimAlgorithm,
  defaultDkimAlgorithm,
  defaultRetiredKeyRetentionDays,
  isExpiredKey,
  newSelector,
  retiredKeyExpiry,
  retiredKeysBeyondLimit,
} from './model/dkim.ts';
import {
  activateDkimKey,
  deleteRetiredDkimKey,
  expireRetiredDkimKey,
  getDkimKey,
  listDkimKeys,
  type NewStoredKey,
  type StoredDkimKey,
} from './store/dkim-keys.ts';
import type { PoolKey } from './store/key-pool.ts';

/**
 * The key store: creates key pairs, keeps their private halves only as envelope-encrypted
 * ciphertext, and opens them for signing. Private keys never leave this module except as the return
 * value of openPrivateKey (for the signer).
 */
function encryptionContext(domain: string, selector: string): EncryptionContext {
  return { purpose: 'svc-mail-dkim-private-key', domain, selector };
}

/** The context of a pooled key's ciphertext: the pool item's id (key-pool.ts). */
export function poolContext(id: string): EncryptionContext {
  return { purpose: 'svc-mail-dkim-pool-key', pool_key: id };
}

export interface NewDkimKey {
  selector: string;
  algorithm: DkimAlgorithm;
  createdAt: string;
  /** The RSA companion's selector (Ed25519 keys). */
  companionSelector?: string;
  /** The key items as written: the key and its companion, both active. */
  stored: StoredDkimKey[];
}

/** How long a retired key stays listed and stored (DKIM_RETIRED_KEY_RETENTION_DAYS, default 30). */
export const retiredKeyRetentionDays = envNumber(
  'DKIM_RETIRED_KEY_RETENTION_DAYS',
  defaultRetiredKeyRetentionDays,
  { min: 0 },
);

/** Where new key pairs come from: generated on the spot, or the pool made ahead (key-pool.ts). */
export type KeyPairSource = (algorithm: DkimAlgorithm) => Promise<DkimKeyPair>;

export async function sealedKey(
  domain: string,
  algorithm: DkimAlgorithm,
  now: Date,
  newKeyPair: KeyPairSource = generateDkimKeyPair,
): Promise<Omit<NewStoredKey, 'createdAt'>> {
  return (await sealedKeyWithPem(domain, algorithm, now, newKeyPair)).sealed;
}

async function sealedKeyWithPem(
  domain: string,
  algorithm: DkimAlgorithm,
  now: Date,
  newKeyPair: KeyPairSource,
): Promise<{ sealed: Omit<NewStoredKey, 'createdAt'>; privateKeyPem: string }> {
  const selector = newSelector(algorithm, now, randomBytes(3).toString('hex'));
  const pair = await newKeyPair(algorithm);
  const privateKeyCiphertext = await sealSecret(
    Buffer.from(pair.privateKeyPem, 'utf8'),
    encryptionContext(domain, selector),
  );
  return {
    sealed: { domain, selector, algorithm, publicKey: pair.publicKey, privateKeyCiphertext },
    privateKeyPem: pair.privateKeyPem,
  };
}

/**
 * Given the new RSA key (the key itself, or an Ed25519 key's companion) before it is activated:
 * SES's BYODKIM takes it (docs/domains.md, "On AWS"). The only other way a private key leaves this
 * module.
 */
export type BeforeActivation = (rsa: { selector: string; privateKeyPem: string }) => Promise<void>;

/**
 * Generates a key pair (and, for Ed25519, an RSA-2048 companion pair), encrypts the private keys
 * and makes the key the domain's active one, retiring `previousSelector` and its companion in the
 * same transaction. Outside Lambda, retired keys whose retention has passed are then removed.
 */
export async function createActiveDkimKey(
  domain: string,
  accountId: string,
  algorithm: DkimAlgorithm,
  previousSelector: string | undefined,
  now: Date = new Date(),
  beforeActivation?: BeforeActivation,
  newKeyPair: KeyPairSource = generateDkimKeyPair,
): Promise<NewDkimKey> {
  const companionAlgo = companionAlgorithm(algorithm);
  const [primaryWithPem, companionWithPem, previous] = await Promise.all([
    sealedKeyWithPem(domain, algorithm, now, newKeyPair),
    companionAlgo === undefined ? undefined : sealedKeyWithPem(domain, companionAlgo, now, newKeyPair),
    previousSelector === undefined ? undefined : getDkimKey(domain, previousSelector),
  ]);
  const primary = primaryWithPem.sealed;
  const companion = companionWithPem?.sealed;
  if (beforeActivation !== undefined) {
    const rsa = companionWithPem ?? primaryWithPem;
    await beforeActivation({ selector: rsa.sealed.selector, privateKeyPem: rsa.privateKeyPem });
  }
  const createdAt = now.toISOString();
  await activateDkimKey({
    key: { ...primary, createdAt, companionSelector: companion?.selector },
    companion:
      companion === undefined ? undefined : { ...companion, createdAt, companionOf: primary.selector },
    accountId,
    previousSelector,
    previousCompanion: previous?.status === 'active' ? previous.companionSelector : undefined,
    retiredExpiresAt: retiredKeyExpiry(now, retiredKeyRetentionDays),
  });
  log('info', 'dkim key activated', {
    domain,
    selector: primary.selector,
    algorithm,
    companion_selector: companion?.selector,
    previousSelector,
  });
  // A domain's first key retired nothing: there is nothing to expire or remove.
  if (previousSelector !== undefined) {
    await retireKeysBeyondLimit(domain, now.getTime());
    // On Lambda the table's TTL removes expired keys, and the function may not delete items (only
    // message-delete may); elsewhere (local host, admin command) nothing else would remove them.
    if (process.env.AWS_LAMBDA_FUNCTION_NAME === undefined) await pruneRetiredKeys(domain, now.getTime());
  }
  const stored: StoredDkimKey[] = [
    { ...primary, createdAt, status: 'active', companionSelector: companion?.selector },
    ...(companion === undefined
      ? []
      : [{ ...companion, createdAt, status: 'active' as const, companionOf: primary.selector }]),
  ];
  return { selector: primary.selector, algorithm, createdAt, companionSelector: companion?.selector, stored };
}

/**
 * Keeps at most `maxRetiredKeySets` retired keys (docs/dkim.md, "Bounds"): older ones end their
 * retention now. A failure is logged; the next rotation tries again.
 */
async function retireKeysBeyondLimit(domain: string, nowMs: number): Promise<void> {
  try {
    const beyond = retiredKeysBeyondLimit(await listDkimKeys(domain), nowMs);
    for (const selector of beyond) await expireRetiredDkimKey(domain, selector, Math.floor(nowMs / 1000));
    if (beyond.length > 0)
      log('info', 'retired dkim keys beyond the limit expired', { domain, keys: beyond.length });
  } catch (error) {
    log('warn', 'expiring retired dkim keys beyond the limit failed', { domain, ...describeError(error) });
  }
}

/**
 * Removes the domain's retired keys whose retention has passed: what the table's TTL does on AWS
 * (typically within two days of `expires_at`), done at each rotation where no TTL runs (DynamoDB
 * Local, under the local host and the admin command). A failure here is logged, never an error of
 * the rotation that already happened.
 */
export async function pruneRetiredKeys(domain: string, nowMs: number = Date.now()): Promise<number> {
  try {
    const expired = (await listDkimKeys(domain)).filter((key) => isExpiredKey(key, nowMs));
    let removed = 0;
    for (const key of expired) if (await deleteRetiredDkimKey(domain, key.selector)) removed++;
    if (removed > 0) log('info', 'retired dkim keys removed', { domain, removed });
    return removed;
  } catch (error) {
    log('warn', 'removing retired dkim keys failed', { domain, ...describeError(error) });
    return 0;
  }
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
export async function openPrivateKey(
  key: Pick<StoredDkimKey, 'domain' | 'selector' | 'privateKeyCiphertext' | 'poolKeyId'>,
): Promise<string> {
  const context =
    key.poolKeyId === undefined ? encryptionContext(key.domain, key.selector) : poolContext(key.poolKeyId);
  const plaintext = await openSecret(key.privateKeyCiphertext, context);
  return plaintext.toString('utf8');
}

/** A new domain's keys, ready to write: the key and, for Ed25519, its RSA companion. */
export interface NewDomainKeys {
  key: NewStoredKey;
  companion?: NewStoredKey;
  /** The RSA key (the key itself or the companion): what SES's BYODKIM takes. */
  rsa: NewStoredKey;
}

/**
 * The keys of a domain being added, with `pooled` as its RSA key when there is one: its ciphertext
 * is kept as the pool sealed it (no decrypt and encrypt on the request, decision 0061). Keys made on
 * the spot (Ed25519 always, RSA when the pool is empty) are sealed under the domain's context.
 */
export async function newDomainKeys(
  domain: string,
  algorithm: DkimAlgorithm,
  now: Date,
  pooled: PoolKey | undefined,
): Promise<NewDomainKeys> {
  const createdAt = now.toISOString();
  const rsaKey = async (): Promise<NewStoredKey> => {
    if (pooled === undefined) {
      return {
        ...(await sealedKeyWithPem(domain, 'rsa-sha256', now, generateDkimKeyPair)).sealed,
        createdAt,
      };
    }
    return {
      domain,
      selector: newSelector('rsa-sha256', now, randomBytes(3).toString('hex')),
      algorithm: 'rsa-sha256',
      publicKey: pooled.publicKey,
      privateKeyCiphertext: pooled.privateKeyCiphertext,
      poolKeyId: pooled.id,
      createdAt,
    };
  };
  if (companionAlgorithm(algorithm) === undefined) {
    const key = await rsaKey();
    return { key, rsa: key };
  }
  const [primary, companion] = await Promise.all([
    sealedKeyWithPem(domain, algorithm, now, generateDkimKeyPair),
    rsaKey(),
  ]);
  const key = { ...primary.sealed, createdAt, companionSelector: companion.selector };
  const linked = { ...companion, companionOf: key.selector };
  return { key, companion: linked, rsa: linked };
}
