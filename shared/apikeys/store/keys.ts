import { batchGetItems } from '../../platform/table/batch-get.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';

/**
 * API key items (docs/data-model.md, "API keys"): one item per key, found by its id (the key
 * check's GetItem) and listed per account on gsi1. An item holds the SHA-256 digest of the secret
 * and its last four characters, never the secret.
 */
export interface NewKeyItem {
  keyId: string;
  account: string;
  name: string;
  digest: string;
  last4: string;
  scopes: string[];
  domains: string[];
  allowedCidrs: string[];
  createdAt: string;
  expiresAt?: string;
  rateLimitRps?: number;
}

export async function putKey(key: NewKeyItem): Promise<boolean> {
  const result = await table.put({
    Item: {
      ...keys.apiKey(key.keyId),
      key_id: key.keyId,
      account_id: key.account,
      name: key.name,
      digest: key.digest,
      last4: key.last4,
      scopes: key.scopes,
      domains: key.domains,
      allowed_cidrs: key.allowedCidrs,
      created_at: key.createdAt,
      ...(key.expiresAt === undefined ? {} : { expires_at: key.expiresAt }),
      ...(key.rateLimitRps === undefined ? {} : { rate_limit_rps: key.rateLimitRps }),
      gsi1pk: keys.apiKeysOfAccount(key.account),
      gsi1sk: `${key.createdAt}#${key.keyId}`,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  return result.outcome === 'applied';
}

/** The account's key item, or undefined when there is none or it belongs to another account. */
export async function getKeyItem(
  account: string,
  keyId: string,
): Promise<Record<string, unknown> | undefined> {
  const item = await table.get(keys.apiKey(keyId), { ConsistentRead: true });
  return item !== undefined && item.account_id === account ? item : undefined;
}

/**
 * Every key of the account, newest first. gsi1 projects only what domain lists need, so the index
 * gives the keys' ids and a BatchGetItem their items.
 */
export async function listKeyItems(account: string): Promise<Record<string, unknown>[]> {
  const entries = await table.queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.apiKeysOfAccount(account) },
    ScanIndexForward: false,
  });
  const itemKeys = entries.map((entry) => ({ pk: String(entry.pk), sk: String(entry.sk) }));
  const items = new Map((await batchGetItems(itemKeys)).map((item) => [String(item.pk), item]));
  return itemKeys.flatMap((key) => {
    const item = items.get(key.pk);
    return item !== undefined && item.account_id === account ? [item] : [];
  });
}

/** Marks the account's key revoked (kept, so its view says when); undefined when not the account's. */
export async function revokeKeyItem(
  account: string,
  keyId: string,
  revokedAt: string,
): Promise<Record<string, unknown> | undefined> {
  const result = await table.update({
    Key: keys.apiKey(keyId),
    UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :at)',
    ConditionExpression: 'account_id = :account',
    ExpressionAttributeValues: { ':at': revokedAt, ':account': account },
    ReturnValues: 'ALL_NEW',
  });
  return result.outcome === 'applied' ? result.attributes : undefined;
}

/**
 * Gives the key a new secret; the current digest becomes the previous one, accepted until
 * `previousUntil`. Only an unrevoked key of the account rotates.
 */
export async function rotateKeyItem(
  account: string,
  keyId: string,
  change: { digest: string; last4: string; previousUntil: string; rotatedAt: string },
): Promise<Record<string, unknown> | undefined> {
  const result = await table.update({
    Key: keys.apiKey(keyId),
    UpdateExpression:
      'SET previous_digest = digest, previous_until = :until, digest = :digest, last4 = :last4, rotated_at = :at',
    ConditionExpression: 'account_id = :account AND attribute_not_exists(revoked_at)',
    ExpressionAttributeValues: {
      ':until': change.previousUntil,
      ':digest': change.digest,
      ':last4': change.last4,
      ':at': change.rotatedAt,
      ':account': account,
    },
    ReturnValues: 'ALL_NEW',
  });
  return result.outcome === 'applied' ? result.attributes : undefined;
}
