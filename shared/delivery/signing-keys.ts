import { getActiveSigningKeys } from '../domains/dkim/index.ts';
import type { SigningKey } from './mail/dkim-signer.ts';

/**
 * The domain's active DKIM keys from the DKIM area's key store (decrypted there, cached per
 * selector): its active key, and the RSA companion of an Ed25519 key. Empty when the domain has no
 * active key or is not `owner`'s: the sender then refuses to send (never unsigned, never with a key
 * of another account).
 */
export function activeSigningKeys(domain: string, owner: string): Promise<SigningKey[]> {
  return getActiveSigningKeys(domain, owner);
}
