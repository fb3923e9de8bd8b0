import { createHash, randomBytes } from 'node:crypto';

/**
 * The API key format (docs/apikeys.md): `svc_live_<key_id>_<secret>`. `key_id` is 16 characters
 * of RFC 4648 base32 in lower case (10 random bytes), `secret` 32 random bytes in base64url. The
 * key id is what the table, the logs and the rate limit see; the secret is shown once and only its
 * SHA-256 digest is stored.
 */
export const apiKeyPrefix = 'svc_live_';

const keyPattern = /^svc_live_([a-z2-7]{16})_([A-Za-z0-9_-]{43})$/;

export interface ParsedApiKey {
  keyId: string;
  secret: string;
}

/** Whether a Bearer credential is meant as an API key (and so must never reach the JWT verifier). */
export function looksLikeApiKey(token: string): boolean {
  return token.startsWith('svc_');
}

/** The key id and secret of a well-formed key; undefined for anything else. */
export function parseApiKey(token: string): ParsedApiKey | undefined {
  const match = keyPattern.exec(token);
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  return { keyId: match[1], secret: match[2] };
}

export function formatApiKey(keyId: string, secret: string): string {
  return `${apiKeyPrefix}${keyId}_${secret}`;
}

/** What the key view shows of a key besides its id: `svc_live_<key_id>`. */
export function keyPrefixOf(keyId: string): string {
  return `${apiKeyPrefix}${keyId}`;
}

const base32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** 16 base32 characters from 10 random bytes (80 bits). */
export function newKeyId(): string {
  const bytes = randomBytes(10);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += base32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a secret: its SHA-256, base64url. */
export function digestOf(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}
