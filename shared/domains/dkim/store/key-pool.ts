import * as table from '../../../platform/table/gateway.ts';
import { keys } from '../../../platform/table/keys.ts';

/**
 * Pool items (`DKIM_POOL` / `KEY#<id>`): RSA-2048 key pairs made ahead of any domain, their private
 * halves envelope-encrypted as domain keys are (under a pool context naming the item's id). One
 * partition: the pool is small (DKIM_KEY_POOL_SIZE), and its reads and writes are a handful a minute.
 */
export interface PoolKey {
  id: string;
  /** The `p=` value: base64 SPKI DER. */
  publicKey: string;
  /** Base64 AWS Encryption SDK message holding the PKCS#8 PEM. */
  privateKeyCiphertext: string;
  createdAt: string;
}

const skPrefix = 'KEY#';

function toPoolKey(item: Record<string, unknown>): PoolKey {
  return {
    id: String(item.sk).slice(skPrefix.length),
    publicKey: String(item.public_key),
    privateKeyCiphertext: String(item.private_key_ciphertext),
    createdAt: String(item.created_at),
  };
}

export async function putPoolKey(key: PoolKey): Promise<void> {
  await table.put({
    Item: {
      ...keys.dkimPoolKey(key.id),
      algorithm: 'rsa-sha256',
      public_key: key.publicKey,
      private_key_ciphertext: key.privateKeyCiphertext,
      created_at: key.createdAt,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
}

/** The ids of up to `limit` keys of the pool (oldest first). */
export async function poolKeyIds(limit: number): Promise<string[]> {
  const page = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.dkimKeyPool, ':prefix': skPrefix },
    ProjectionExpression: 'sk',
    Limit: limit,
  });
  return page.items.map((item) => String(item.sk).slice(skPrefix.length));
}

/*
 * The ids the last look at the pool found and this instance has not tried yet: the next takes try
 * them first, a single delete each, and look again only when they run out.
 */
let candidates: string[] = [];

/**
 * Takes one key out of the pool: a conditional delete, so of two requests that pick the same key,
 * one gets it and the other tries the next. Undefined when the pool has none left to take.
 */
export async function takePoolKey(lookAt = 5): Promise<PoolKey | undefined> {
  for (let look = 0; look < 2; look++) {
    if (candidates.length === 0) {
      // Concurrent takers start at different keys, so most of them win their first delete.
      const ids = await poolKeyIds(lookAt);
      const start = Math.floor(Math.random() * ids.length);
      candidates = [...ids.slice(start), ...ids.slice(0, start)];
      if (candidates.length === 0) return undefined;
    }
    while (candidates.length > 0) {
      const taken = await takePoolKeyById(candidates.shift() as string);
      if (taken !== undefined) return taken;
    }
  }
  return undefined;
}

/** Up to `limit` whole keys of the pool (oldest first), to take one inside another write. */
export async function poolKeys(limit: number): Promise<PoolKey[]> {
  const page = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.dkimKeyPool, ':prefix': skPrefix },
    Limit: limit,
  });
  return page.items.map(toPoolKey);
}

/*
 * The whole keys the last look at the pool found, for domain add: each is handed to one add of this
 * instance, which takes it in its own transaction (takePoolKeyItem) or hands it back.
 */
let wholeCandidates: PoolKey[] = [];

/** A pool key for this add to take: from the last look, else a new look. Undefined: the pool is empty. */
export async function poolCandidate(lookAt = 5): Promise<PoolKey | undefined> {
  if (wholeCandidates.length === 0) {
    // Concurrent takers start at different keys, so most of them win their first transaction.
    const found = await poolKeys(lookAt);
    const start = Math.floor(Math.random() * found.length);
    wholeCandidates = [...found.slice(start), ...found.slice(0, start)];
  }
  return wholeCandidates.shift();
}

/** Hands back a candidate an add did not use (the domain existed, or the add stopped before its write). */
export function returnPoolCandidate(key: PoolKey): void {
  wholeCandidates.unshift(key);
}

/** The transaction item that takes key `id` out of the pool: its condition fails once another took it. */
export function takePoolKeyItem(id: string): table.TransactItem {
  return { Delete: { Key: keys.dkimPoolKey(id), ConditionExpression: 'attribute_exists(pk)' } };
}

/** Takes the key `id` out of the pool; undefined when another request took it first. */
export async function takePoolKeyById(id: string): Promise<PoolKey | undefined> {
  const outcome = await table.delete({
    Key: keys.dkimPoolKey(id),
    ConditionExpression: 'attribute_exists(pk)',
    ReturnValues: 'ALL_OLD',
  });
  return outcome.outcome === 'applied' && outcome.attributes !== undefined
    ? toPoolKey(outcome.attributes)
    : undefined;
}
