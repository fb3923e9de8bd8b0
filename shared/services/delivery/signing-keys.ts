import type { SigningKey } from '../../mail/dkim.ts';
import { getActiveSigningKey } from '../dkim-signing-keys.ts';

/**
 * The domain's active DKIM key from the DKIM area's key store (decrypted there, cached per selector).
 * Undefined when the domain has no active key: the message then goes out unsigned, and its history
 * says so.
 */
export function activeSigningKey(domain: string): Promise<SigningKey | undefined> {
  return getActiveSigningKey(domain);
}
