import { digestOf, formatApiKey, newSecret } from '../platform/auth/api-key-format.ts';
import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import type { IssuedKey } from './add.ts';
import { type KeyView, toKeyView } from './model/view.ts';
import { getKeyItem, listKeyItems, revokeKeyItem, rotateKeyItem } from './store/keys.ts';

const notFound = (keyId: string) =>
  new ServiceError(Code.NotFound, `No API key ${keyId} in your account`, {
    details: [{ field: 'key_id', message: 'no such key in your account' }],
  });

export async function queryKey(account: string, keyId: string): Promise<KeyView> {
  const item = await getKeyItem(account, keyId);
  if (item === undefined) throw notFound(keyId);
  return toKeyView(item);
}

export async function listKeys(account: string): Promise<KeyView[]> {
  return (await listKeyItems(account)).map(toKeyView);
}

/** Revokes a key of the account: every instance refuses it (110) within 30 s. Revoking twice keeps the first time. */
export async function revokeKey(account: string, keyId: string, now = new Date()): Promise<KeyView> {
  const item = await revokeKeyItem(account, keyId, now.toISOString());
  if (item === undefined) throw notFound(keyId);
  return toKeyView(item);
}

/**
 * A new secret for a key of the account; the old one keeps working for `graceSeconds` (then 110).
 * A revoked key does not rotate (111).
 */
export async function rotateKey(
  account: string,
  keyId: string,
  graceSeconds: number,
  now = new Date(),
): Promise<IssuedKey> {
  const secret = newSecret();
  const item = await rotateKeyItem(account, keyId, {
    digest: digestOf(secret),
    last4: secret.slice(-4),
    previousUntil: new Date(now.getTime() + graceSeconds * 1000).toISOString(),
    rotatedAt: now.toISOString(),
  });
  if (item === undefined) {
    if ((await getKeyItem(account, keyId)) === undefined) throw notFound(keyId);
    throw new ServiceError(Code.MethodValidation, 'A revoked key cannot be rotated', {
      details: [{ field: 'key_id', message: 'the key is revoked' }],
    });
  }
  return { key: formatApiKey(keyId, secret), api_key: toKeyView(item) };
}
