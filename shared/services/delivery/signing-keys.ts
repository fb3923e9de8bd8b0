import type { SigningKey } from '../../mail/dkim.ts';

/**
 * The domain's active DKIM key from the DKIM area's key store (decrypted there). Kept behind one
 * function so the sender does not care how keys are stored.
 */
export async function activeSigningKey(domain: string): Promise<SigningKey | undefined> {
  const store = '../dkim-signing-keys.ts';
  const module = (await import(store).catch(() => ({ getActiveSigningKey: async () => undefined }))) as {
    getActiveSigningKey(domain: string): Promise<SigningKey | undefined>;
  };
  return module.getActiveSigningKey(domain);
}
