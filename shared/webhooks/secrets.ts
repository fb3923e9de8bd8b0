import { randomBytes } from 'node:crypto';
import { openSecret, sealSecret } from '../platform/aws/key-envelope.ts';
import { webhookSecretPurpose } from './config.ts';

/**
 * Endpoint signing secrets: `whsec_` + base64 of 32 random bytes, shown to the caller only when
 * created or rotated, stored only as envelope-encrypted ciphertext (the same envelope as DKIM
 * private keys: a KMS key on AWS, a local AES key locally), bound to the endpoint by the
 * encryption context so a ciphertext copied to another endpoint does not open.
 */

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

const contextOf = (webhookId: string) => ({ purpose: webhookSecretPurpose, webhook_id: webhookId });

export function sealWebhookSecret(webhookId: string, secret: string): Promise<string> {
  return sealSecret(Buffer.from(secret, 'utf8'), contextOf(webhookId));
}

const opened = new Map<string, Promise<string>>();

/** The secret in a ciphertext, cached per ciphertext for the life of the function instance. */
export function openWebhookSecret(webhookId: string, ciphertext: string): Promise<string> {
  const cacheKey = `${webhookId}:${ciphertext}`;
  let secret = opened.get(cacheKey);
  if (secret === undefined) {
    secret = openSecret(ciphertext, contextOf(webhookId)).then((plaintext) => plaintext.toString('utf8'));
    secret.catch(() => opened.delete(cacheKey));
    if (opened.size > 500) opened.clear();
    opened.set(cacheKey, secret);
  }
  return secret;
}
