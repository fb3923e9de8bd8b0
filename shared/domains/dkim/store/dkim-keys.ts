import * as table from '../../../platform/table/gateway.ts';
import { keys } from '../../../platform/table/keys.ts';
import { type DkimAlgorithm, type DkimKeyStatus, isDkimAlgorithm } from '../model/dkim.ts';

/**
 * DKIM key items (`DOMAIN#<domain>` / `DKIM#<selector>`, docs/data-model.md), stored beside their
 * domain item so one Query lists them. The private key is kept only as an AWS Encryption SDK
 * ciphertext (shared/platform/aws/key-envelope.ts).
 */
export interface StoredDkimKey {
  domain: string;
  selector: string;
  algorithm: DkimAlgorithm;
  /** The `p=` value of the DNS record. */
  publicKey: string;
  /** Base64 AWS Encryption SDK message holding the PKCS#8 PEM. */
  privateKeyCiphertext: string;
  status: DkimKeyStatus;
  createdAt: string;
  retiredAt?: string;
  /**
   * On an Ed25519 key: the selector of the RSA-2048 key created with it, which signs beside it
   * (RFC 8463 section 4). Both are active and retired together.
   */
  companionSelector?: string;
  /** On a companion key: the selector of the key it accompanies. */
  companionOf?: string;
  /** Epoch seconds after which a retired key is removed (the table's TTL attribute). */
  expiresAt?: number;
  /**
   * Set when the key came from the pool and its ciphertext is the pool item's, sealed under the
   * pool's context naming this id (docs/decisions/0061-pooled-key-ciphertext-kept.md).
   */
  poolKeyId?: string;
}

const skPrefix = 'DKIM#';

function toKey(item: Record<string, unknown>): StoredDkimKey {
  const algorithm = item.algorithm;
  if (!isDkimAlgorithm(algorithm)) throw new Error('Stored DKIM key has an unknown algorithm');
  const key: StoredDkimKey = {
    domain: String(item.domain),
    selector: String(item.selector),
    algorithm,
    publicKey: String(item.public_key),
    privateKeyCiphertext: String(item.private_key_ciphertext),
    status: item.status === 'active' ? 'active' : 'retired',
    createdAt: String(item.created_at),
  };
  if (typeof item.retired_at === 'string') key.retiredAt = item.retired_at;
  if (typeof item.companion_selector === 'string') key.companionSelector = item.companion_selector;
  if (typeof item.companion_of === 'string') key.companionOf = item.companion_of;
  if (typeof item.expires_at === 'number') key.expiresAt = item.expires_at;
  if (typeof item.pool_key_id === 'string') key.poolKeyId = item.pool_key_id;
  return key;
}

/** Every key of a domain (active and retired), newest first. */
export async function listDkimKeys(domain: string): Promise<StoredDkimKey[]> {
  const items = await table.queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.domain(domain).pk, ':prefix': skPrefix },
  });
  return items
    .map(toKey)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.selector.localeCompare(b.selector));
}

export async function getDkimKey(domain: string, selector: string): Promise<StoredDkimKey | undefined> {
  const item = await table.get(keys.dkimKey(domain, selector));
  return item === undefined ? undefined : toKey(item);
}

export type NewStoredKey = Omit<StoredDkimKey, 'status' | 'retiredAt' | 'expiresAt'>;

export interface ActivateKeyInput {
  /** The key that becomes the domain's `active_selector`. */
  key: NewStoredKey;
  /** Its RSA companion (for an Ed25519 key), written and activated in the same transaction. */
  companion?: NewStoredKey;
  accountId: string;
  /** The selector that is active now (retired by this write), or undefined for a domain's first key. */
  previousSelector: string | undefined;
  /** The previous key's companion, retired with it. */
  previousCompanion?: string;
  /** Epoch seconds at which the retired keys expire (the table's TTL removes them). */
  retiredExpiresAt: number;
}

/** The transaction item that writes a new active key (refused when its selector exists). */
export function putKeyItem(key: NewStoredKey): table.TransactItem {
  return {
    Put: {
      Item: {
        ...keys.dkimKey(key.domain, key.selector),
        domain: key.domain,
        selector: key.selector,
        algorithm: key.algorithm,
        public_key: key.publicKey,
        private_key_ciphertext: key.privateKeyCiphertext,
        status: 'active',
        created_at: key.createdAt,
        ...(key.companionSelector === undefined ? {} : { companion_selector: key.companionSelector }),
        ...(key.companionOf === undefined ? {} : { companion_of: key.companionOf }),
        ...(key.poolKeyId === undefined ? {} : { pool_key_id: key.poolKeyId }),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

function retireKeyItem(domain: string, selector: string, at: string, expiresAt: number): table.TransactItem {
  return {
    Update: {
      Key: keys.dkimKey(domain, selector),
      UpdateExpression: 'SET #status = :retired, retired_at = :at, expires_at = :expires',
      ConditionExpression: '#status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':retired': 'retired',
        ':active': 'active',
        ':at': at,
        ':expires': expiresAt,
      },
    },
  };
}

/**
 * Makes a new key (and its companion, if any) the domain's active key in one transaction: the new
 * key items (refused if a selector exists), the previous key and its companion marked retired
 * (only if still active) with their expiry time, and the domain's `active_selector` moved (only if
 * the domain still belongs to the account and still points at the previous key). A concurrent
 * rotation makes the transaction fail (code 5, retry), never leaving two active keys.
 */
export async function activateDkimKey({
  key,
  companion,
  accountId,
  previousSelector,
  previousCompanion,
  retiredExpiresAt,
}: ActivateKeyInput): Promise<void> {
  const at = key.createdAt;
  const items: table.TransactItem[] = [
    putKeyItem(key),
    {
      Update: {
        Key: keys.domain(key.domain),
        UpdateExpression: 'SET active_selector = :selector',
        ConditionExpression:
          previousSelector === undefined
            ? 'account_id = :account AND attribute_not_exists(active_selector)'
            : 'account_id = :account AND active_selector = :previous',
        ExpressionAttributeValues: {
          ':selector': key.selector,
          ':account': accountId,
          ...(previousSelector === undefined ? {} : { ':previous': previousSelector }),
        },
      },
    },
  ];
  if (companion !== undefined) items.push(putKeyItem(companion));
  for (const selector of [previousSelector, previousCompanion]) {
    if (selector !== undefined) items.push(retireKeyItem(key.domain, selector, at, retiredExpiresAt));
  }
  const outcome = await table.transact(items);
  // A concurrent rotation (or key) came first: code 5, as any cancelled transaction.
  if (outcome.outcome === 'condition-failed') throw table.conditionFault(outcome);
}

/**
 * Ends a retired key's retention now (only while it is still retired): the status endpoint stops
 * listing it at once, the table's TTL removes it (and, outside Lambda, the next prune). An update,
 * so set-algorithm needs no DeleteItem permission.
 */
export async function expireRetiredDkimKey(
  domain: string,
  selector: string,
  nowSeconds: number,
): Promise<void> {
  // A failed condition: the key is active again or gone, and keeps its own retention.
  await table.update({
    Key: keys.dkimKey(domain, selector),
    UpdateExpression: 'SET expires_at = :now',
    ConditionExpression: '#status = :retired',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':retired': 'retired', ':now': nowSeconds },
  });
}

/**
 * Deletes a retired key (only while it is still retired). The table's TTL removes retired keys on
 * AWS by itself; this is the same removal done at once, for keys whose time has come.
 */
export async function deleteRetiredDkimKey(domain: string, selector: string): Promise<boolean> {
  const result = await table.delete({
    Key: keys.dkimKey(domain, selector),
    ConditionExpression: '#status = :retired',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':retired': 'retired' },
  });
  return result.outcome === 'applied';
}

/**
 * Removes every key of a domain (when the domain is deleted or an operator removes it). A domain
 * holds a few keys, so one DeleteItem each: BatchWriteItem stays the batch route's alone (IAM
 * cannot limit it to deletes, docs/security.md).
 */
export async function deleteDkimKeys(domain: string): Promise<number> {
  const existing = await listDkimKeys(domain);
  await Promise.all(existing.map((key) => table.delete({ Key: keys.dkimKey(domain, key.selector) })));
  return existing.length;
}
