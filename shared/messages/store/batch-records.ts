import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { Code } from '../../platform/errors/catalogue.ts';
import { ServiceError } from '../../platform/errors/service-error.ts';
import { batchGetItems } from '../../platform/table/batch-get.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';

/**
 * The idempotency record of a batch (docs/data-model.md, "Idempotency record"): one `Idempotency-Key`
 * covers the whole batch. Its head (the add's key, `sk = IDEMPOTENCY`) says whose it is, which body
 * it answers (`body_hash`), the batch's time, whether it is `pending` or `done`, and which request
 * holds it until `lease_until`; the batch's results (every uuid, in request order, and every
 * refusal) are Brotli-compressed JSON in result items beside it (`sk = RESULTS#<id>#<n>`, each under
 * 350 KB, so any batch fits), written before the head and never changed.
 *
 * The head is written before the messages: a request that dies half way leaves a pending head with
 * the uuids it chose, and a retry whose lease has run out takes the head over and completes the
 * batch with those same uuids, so a retried batch never stores a message twice and never answers a
 * uuid that does not exist.
 */
const chunkBytes = 350 * 1024;

export type BatchState = 'pending' | 'done';

export interface BatchRecord {
  /** `batch`, or `message` for an add's record under the same key (never replayed by a batch). */
  kind: 'batch' | 'message';
  bodyHash: string;
  state: BatchState;
  /** The batch's time (UTC ISO): every message of it was created then. */
  createdAt: string;
  /** The request that holds the record, and until when (epoch ms). */
  holder: string;
  leaseUntil: number;
  /** Where the results are: `RESULTS#<resultsId>#0 … #<chunks − 1>`. */
  resultsId: string;
  chunks: number;
}

type Item = Record<string, unknown>;

const resultKey = (account: string, key: string, resultsId: string, index: number) => ({
  pk: keys.idempotency(account, key).pk,
  sk: `RESULTS#${resultsId}#${index}`,
});

function recordOf(item: Item | undefined, account: string, nowSeconds: number): BatchRecord | undefined {
  // Past its lifetime (TTL has not removed it yet) or another account's: absent.
  if (item === undefined || item.account_id !== account || Number(item.expires_at) < nowSeconds)
    return undefined;
  return {
    kind: item.kind === 'batch' ? 'batch' : 'message',
    bodyHash: String(item.body_hash ?? ''),
    state: item.state === 'pending' ? 'pending' : 'done',
    createdAt: String(item.created_at ?? ''),
    holder: String(item.holder ?? ''),
    leaseUntil: Number(item.lease_until ?? 0),
    resultsId: String(item.results_id ?? ''),
    chunks: Number(item.result_chunks ?? 0),
  };
}

/** The live record under a key, if any, read consistently. */
export async function getBatchRecord(
  account: string,
  key: string,
  now: Date,
): Promise<BatchRecord | undefined> {
  const item = await table.get(keys.idempotency(account, key), { ConsistentRead: true });
  return recordOf(item, account, Math.floor(now.getTime() / 1000));
}

export interface BatchClaim {
  key: string;
  bodyHash: string;
  createdAt: string;
  holder: string;
  leaseUntil: number;
  /** Epoch seconds: the TTL of the head and its result items. */
  expiresAt: number;
  now: Date;
}

/**
 * Stores the results, then claims the key with a conditional put of the head (absent, or past its
 * lifetime). Returns the head another request put first, when there is one: this request then
 * answers from it, and its result items are left to expire.
 */
export async function claimBatchKey(
  account: string,
  claim: BatchClaim,
  results: unknown,
): Promise<{ claimed: true } | { claimed: false; record: BatchRecord | undefined }> {
  const packed = brotliCompressSync(Buffer.from(JSON.stringify(results), 'utf8'));
  const chunks: Buffer[] = [];
  for (let start = 0; start < packed.length || chunks.length === 0; start += chunkBytes)
    chunks.push(packed.subarray(start, start + chunkBytes));
  const resultsId = claim.holder;
  // Usually one item (500 uuids compress to about 20 KB); more only for many long refusals.
  await Promise.all(
    chunks.map((z, index) =>
      table.put({
        Item: {
          ...resultKey(account, claim.key, resultsId, index),
          account_id: account,
          z,
          expires_at: claim.expiresAt,
        },
      }),
    ),
  );
  const head = await table.put({
    Item: {
      ...keys.idempotency(account, claim.key),
      account_id: account,
      kind: 'batch',
      body_hash: claim.bodyHash,
      state: 'pending',
      created_at: claim.createdAt,
      holder: claim.holder,
      lease_until: claim.leaseUntil,
      results_id: resultsId,
      result_chunks: chunks.length,
      expires_at: claim.expiresAt,
    },
    ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now',
    ExpressionAttributeValues: { ':now': Math.floor(claim.now.getTime() / 1000) },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  if (head.outcome === 'applied') return { claimed: true };
  // The head another request put first, read again consistently.
  return { claimed: false, record: await getBatchRecord(account, claim.key, claim.now) };
}

/** The results a record points to, as they were stored. */
export async function readBatchResults(account: string, key: string, record: BatchRecord): Promise<unknown> {
  const wanted = Array.from({ length: record.chunks }, (_, index) =>
    resultKey(account, key, record.resultsId, index),
  );
  const found = new Map<string, Buffer>();
  for (const item of await batchGetItems(wanted))
    found.set(String(item.sk), Buffer.from(item.z as Uint8Array));
  const parts = wanted.map((entry) => found.get(entry.sk));
  // Every key was answered: a missing part is a store fault, answered as one (code 4), not a 500.
  if (parts.some((part) => part === undefined))
    throw new ServiceError(
      Code.DatabaseUnavailable,
      'The stored results of this batch are incomplete; retry',
    );
  return JSON.parse(brotliDecompressSync(Buffer.concat(parts as Buffer[])).toString('utf8'));
}

async function updateHead(
  account: string,
  key: string,
  set: Record<string, unknown>,
  condition: string,
  values: Record<string, unknown>,
): Promise<boolean> {
  const names = Object.keys(set);
  const result = await table.update({
    Key: keys.idempotency(account, key),
    UpdateExpression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')}`,
    ConditionExpression: `attribute_exists(pk) AND account_id = :account AND ${condition}`,
    ExpressionAttributeNames: {
      ...Object.fromEntries(names.map((name) => [`#${name}`, name])),
      ...(condition.includes('#state') ? { '#state': 'state' } : {}),
    },
    ExpressionAttributeValues: {
      ':account': account,
      ...Object.fromEntries(names.map((name) => [`:${name}`, set[name]])),
      ...values,
    },
  });
  return result.outcome === 'applied';
}

/** Marks the batch done: every message is stored. Only its holder may. */
export function finishBatch(account: string, key: string, holder: string): Promise<boolean> {
  return updateHead(account, key, { state: 'done' }, 'holder = :me', { ':me': holder });
}

/** Gives up the lease at once (the request failed), so that a retry can complete the batch. */
export function releaseBatch(account: string, key: string, holder: string): Promise<boolean> {
  return updateHead(account, key, { lease_until: 0 }, 'holder = :me AND #state = :pending', {
    ':me': holder,
    ':pending': 'pending',
  });
}

/**
 * Takes over a pending record whose lease has run out (its request died or failed): the new holder
 * completes the batch. Conditional on the holder seen, so of two retries only one takes it.
 */
export function takeOverBatch(
  account: string,
  key: string,
  seen: BatchRecord,
  holder: string,
  leaseUntil: number,
  nowMs: number,
): Promise<boolean> {
  return updateHead(
    account,
    key,
    { holder, lease_until: leaseUntil },
    'holder = :seen AND #state = :pending AND lease_until < :nowMs',
    { ':seen': seen.holder, ':pending': 'pending', ':nowMs': nowMs },
  );
}
