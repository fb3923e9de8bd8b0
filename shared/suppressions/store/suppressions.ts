import { batchGetItems } from '../../platform/table/batch-get.ts';
import { writeInBatches } from '../../platform/table/batch-write.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import type { Suppression, SuppressionReason, SuppressionStream } from '../model/suppressions.ts';

/**
 * Storage of the per-account suppression list (docs/data-model.md): one item per account and
 * address, `pk = SUPPRESSION#<email>`, `sk = ACCOUNT#<account>`, plus the sparse `suppressions`
 * index (`ACCOUNT_SUPPRESSIONS#<account>` / `<reason>#<created_at>#<email>`) for listing. Every
 * call names the account, so no call can reach another account's entries.
 */
export const suppressionIndex = 'suppressions';

type Item = Record<string, unknown>;

const batchGetSize = 100;

function toSuppression(item: Item): Suppression {
  return {
    email: String(item.email),
    reason: item.reason as SuppressionReason,
    stream: item.stream === 'broadcast' ? 'broadcast' : 'all',
    detail: typeof item.detail === 'string' ? item.detail : null,
    message_uuid: typeof item.message_uuid === 'string' ? item.message_uuid : null,
    created_at: String(item.created_at),
  };
}

/** The key of an entry: the entry for every stream, or the broadcast-only one beside it. */
const keyOf = (accountId: string, email: string, stream: SuppressionStream) =>
  stream === 'broadcast' ? keys.broadcastSuppression(accountId, email) : keys.suppression(accountId, email);

function itemOf(accountId: string, entry: Suppression): Item {
  return {
    ...keyOf(accountId, entry.email, entry.stream),
    suppressions_pk: keys.suppressionsOfAccount(accountId),
    suppressions_sk: keys.suppressionsSortKey(entry.reason, entry.created_at, entry.email),
    account_id: accountId,
    email: entry.email,
    reason: entry.reason,
    ...(entry.stream === 'broadcast' ? { stream: 'broadcast' } : {}),
    ...(entry.detail === null ? {} : { detail: entry.detail }),
    ...(entry.message_uuid === null ? {} : { message_uuid: entry.message_uuid }),
    created_at: entry.created_at,
  };
}

/** Batch requests in flight at once (long lists: the pre-send check has at most one batch). */
const batchConcurrency = 4;

/** Runs `work` on each chunk of `size` items, `batchConcurrency` chunks at a time. */
async function inChunks<T>(
  items: readonly T[],
  size: number,
  work: (chunk: T[]) => Promise<void>,
): Promise<void> {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(batchConcurrency, chunks.length) }, async () => {
      while (next < chunks.length) await work(chunks[next++] as T[]);
    }),
  );
}

/** One entry of an account (of `stream`: the entry for every stream unless told), or undefined. */
export async function getSuppression(
  accountId: string,
  email: string,
  stream: SuppressionStream = 'all',
): Promise<Suppression | undefined> {
  const item = await table.get(keyOf(accountId, email, stream), { ConsistentRead: true });
  return item === undefined ? undefined : toSuppression(item);
}

/**
 * The entries of `emails` (lower-cased, distinct) on the account's list, by address: BatchGetItem by
 * key, 100 addresses per request, unprocessed keys retried. This is the sender's pre-send check.
 */
export async function findSuppressions(
  accountId: string,
  emails: readonly string[],
  streams: readonly SuppressionStream[] = ['all'],
): Promise<Map<string, Suppression>> {
  const found = new Map<string, Suppression>();
  const wanted = emails.flatMap((email) => streams.map((stream) => keyOf(accountId, email, stream)));
  await inChunks(wanted, batchGetSize, async (chunk) => {
    for (const item of await batchGetItems(chunk)) {
      if (item.account_id !== accountId) continue;
      const entry = toSuppression(item);
      // An entry for every stream says more than a broadcast-only one of the same address.
      if (found.get(entry.email)?.stream !== 'all') found.set(entry.email, entry);
    }
  });
  return found;
}

/**
 * Adds an entry unless the account already lists the address (the first reason stays). True when
 * added. A conditional PutItem, so two writers never both report "added".
 */
export async function addSuppressionIfAbsent(accountId: string, entry: Suppression): Promise<boolean> {
  const result = await table.put({
    Item: itemOf(accountId, entry),
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  return result.outcome === 'applied';
}

/**
 * Bulk load (the admin import): BatchWriteItem, 25 entries per request, unprocessed items retried
 * with backoff. Unconditional, so the caller leaves out the addresses already listed.
 */
export async function putSuppressions(accountId: string, entries: readonly Suppression[]): Promise<void> {
  await writeInBatches(
    entries.map((entry) => ({ PutRequest: { Item: itemOf(accountId, entry) } })),
    batchConcurrency,
  );
}

/** Removes the account's entries of an address (every stream's and broadcast's); true when there was one. */
export async function deleteSuppression(accountId: string, email: string): Promise<boolean> {
  const results = await Promise.all(
    (['all', 'broadcast'] as const).map((stream) =>
      table.delete({ Key: keyOf(accountId, email, stream), ReturnValues: 'ALL_OLD' }),
    ),
  );
  return results.some((result) => result.outcome === 'applied' && result.attributes !== undefined);
}

export interface SuppressionQuery {
  accountId: string;
  reason: SuppressionReason;
  /** UTC ISO bounds on created_at, inclusive. */
  createdFrom?: string;
  createdTo?: string;
  /** Continue after this `<created_at>#<email>` (exclusive). */
  after?: string;
  limit: number;
}

/**
 * One reason stream of the account's list, newest first, through the `suppressions` index: the
 * key condition bounds the sort key by reason, dates and the cursor position, so DynamoDB reads
 * only what it returns (plus one look-ahead entry to know whether more follow).
 */
export async function querySuppressions(
  query: SuppressionQuery,
): Promise<{ items: Suppression[]; more: boolean }> {
  const sortKey = (rest: string) => `${query.reason}#${rest}`;
  let startKey: Record<string, string> | undefined;
  if (query.after !== undefined) {
    // `<created_at>#<email>`: created_at is a fixed-width UTC ISO string.
    const createdAt = query.after.slice(0, 24);
    const email = query.after.slice(25);
    startKey = {
      ...keyOf(query.accountId, email, query.reason === 'unsubscribed' ? 'broadcast' : 'all'),
      suppressions_pk: keys.suppressionsOfAccount(query.accountId),
      suppressions_sk: keys.suppressionsSortKey(query.reason, createdAt, email),
    };
  }
  const page = await table.query({
    IndexName: suppressionIndex,
    KeyConditionExpression: 'suppressions_pk = :pk AND suppressions_sk BETWEEN :lower AND :upper',
    ExpressionAttributeValues: {
      ':pk': keys.suppressionsOfAccount(query.accountId),
      ':lower': sortKey(query.createdFrom ?? ''),
      // '~' sorts after '#', so an entry created exactly at createdTo is included.
      ':upper': sortKey(`${query.createdTo ?? '9999'}~`),
    },
    ScanIndexForward: false,
    Limit: query.limit + 1,
    ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
  });
  const items = page.items.map(toSuppression);
  return {
    items: items.slice(0, query.limit),
    more: items.length > query.limit || page.lastKey !== undefined,
  };
}
