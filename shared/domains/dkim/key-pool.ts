import { randomUUID } from 'node:crypto';
import { openSecret, sealSecret } from '../../platform/aws/key-envelope.ts';
import { envNumber } from '../../platform/config/env.ts';
import { log } from '../../platform/observability/log.ts';
import { type DkimKeyPair, generateDkimKeyPair } from './key-pair.ts';
import { poolContext } from './key-store.ts';
import type { DkimAlgorithm } from './model/dkim.ts';
import { poolKeyIds, putPoolKey, takePoolKey } from './store/key-pool.ts';

/**
 * The pool of RSA-2048 key pairs made ahead (docs/domains.md, "Key pool"): generating one takes
 * far longer than the rest of a domain add, so a scheduled function keeps `DKIM_KEY_POOL_SIZE`
 * ready and add takes one. A pooled private key is sealed under the pool's context (its item id).
 * Domain add keeps that ciphertext as it is, the key item naming the pool id (decision 0061); a
 * claim opens it and seals it again under the domain's context.
 */
export const keyPoolSize = envNumber('DKIM_KEY_POOL_SIZE', 20, { min: 0 });

export interface RefillReport {
  /** Keys in the pool before the run (at most the pool's size is counted). */
  found: number;
  added: number;
}

/** Adds keys until the pool holds `size`. Overlapping runs may add a few too many: harmless. */
export async function refillKeyPool(
  size: number = keyPoolSize,
  now: () => Date = () => new Date(),
): Promise<RefillReport> {
  const found = (await poolKeyIds(size)).length;
  let added = 0;
  for (let missing = size - found; missing > 0; missing--) {
    const id = randomUUID();
    const pair = await generateDkimKeyPair('rsa-sha256');
    const privateKeyCiphertext = await sealSecret(Buffer.from(pair.privateKeyPem, 'utf8'), poolContext(id));
    await putPoolKey({ id, publicKey: pair.publicKey, privateKeyCiphertext, createdAt: now().toISOString() });
    added++;
  }
  return { found, added };
}

/**
 * A key pair for a new domain key: RSA from the pool when it has one (generated on the spot when it
 * is empty); Ed25519 always on the spot, which is quick.
 */
export async function pooledKeyPair(algorithm: DkimAlgorithm): Promise<DkimKeyPair> {
  if (algorithm !== 'rsa-sha256' || keyPoolSize === 0) return generateDkimKeyPair(algorithm);
  const taken = await takePoolKey();
  if (taken === undefined) {
    log('warn', 'dkim key pool empty; generating the key on the request', { algorithm });
    return generateDkimKeyPair(algorithm);
  }
  const pem = await openSecret(taken.privateKeyCiphertext, poolContext(taken.id));
  return { publicKey: taken.publicKey, privateKeyPem: pem.toString('utf8') };
}
