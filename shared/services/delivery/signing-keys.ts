import type { SigningKey } from '../../mail/dkim.ts';
import { getActiveSigningKeys } from '../dkim-signing-keys.ts';

/**
 * The domain's active DKIM keys from the DKIM area's key store (decrypted there, cached per
 * selector): its active key, and the RSA companion of an Ed25519 key. Empty when the domain has no
 * active key: the message then goes out unsigned, and its history says so.
 */
export function activeSigningKeys(domain: string): Promise<SigningKey[]> {
  return getActiveSigningKeys(domain);
}
