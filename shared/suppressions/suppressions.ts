import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { log } from '../platform/observability/log.ts';
import type { Positions } from '../platform/paging/cursor.ts';
import { dateRangeOf } from '../platform/time/date-range.ts';
import { formatDate } from '../platform/time/format.ts';
import {
  clipDetail,
  decodeSuppressionCursor,
  distinctAddresses,
  encodeSuppressionCursor,
  mergePages,
  positionOf,
  reasonsOfStream,
  type Suppression,
  type SuppressionCause,
  type SuppressionReason,
  type SuppressionStream,
  suppressionReasons,
} from './model/suppressions.ts';
import {
  addSuppressionIfAbsent,
  deleteSuppression,
  findSuppressions,
  putSuppressions,
  querySuppressions,
} from './store/suppressions.ts';

/**
 * The per-account suppression list (docs/suppressions.md): the three routes, the automatic entries
 * the delivery pipeline makes on hard bounces and complaints, the sender's pre-send lookup and the
 * admin import. Addresses arrive here already parsed and lower-cased.
 */
export const defaultSuppressionLimit = 100;
/** Parallel conditional writes per request (add, delete). */
const writeConcurrency = 16;

export type SuppressionView = Omit<Suppression, 'created_at'> & { created_at: string };

export function suppressionView(entry: Suppression): SuppressionView {
  return { ...entry, created_at: formatDate(entry.created_at) };
}

async function eachLimited<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  });
  await Promise.all(runners);
  return results;
}

/**
 * `{"email"}`: the account's entry for one address, or null: the entry for every stream when there
 * is one (it says more), else a broadcast-only one (an unsubscribe).
 */
export async function lookupSuppression(account: string, email: string): Promise<SuppressionView | null> {
  const entry = (await findSuppressions(account, [email], ['all', 'broadcast'])).get(email);
  return entry === undefined ? null : suppressionView(entry);
}

export interface SuppressionFilters {
  reason?: SuppressionReason;
  stream?: SuppressionStream;
  date_from?: string;
  date_to?: string;
  limit?: number;
}

export interface SuppressionPage {
  suppressions: SuppressionView[];
  count: number;
  next_cursor: string | null;
}

/**
 * A page of the account's list, newest first: one Query per reason stream on the `suppressions`
 * index (one stream with a reason filter, three without), merged by creation time.
 */
export async function listSuppressions(
  account: string,
  filters: SuppressionFilters,
  cursor: string | undefined,
): Promise<SuppressionPage> {
  const streams: SuppressionReason[] = (
    filters.reason === undefined ? [...suppressionReasons] : [filters.reason]
  ).filter((reason) => filters.stream === undefined || reasonsOfStream[filters.stream].includes(reason));
  // A reason of the other stream (unsubscribed with stream all): no entry can match.
  if (streams.length === 0) return { suppressions: [], count: 0, next_cursor: null };
  const { from, to } = dateRangeOf(filters);
  const limit = filters.limit ?? defaultSuppressionLimit;
  const fingerprint = { streams, from: from?.toISOString(), to: to?.toISOString() };
  let positions: Positions = Object.fromEntries(streams.map((stream) => [stream, { done: false }]));
  if (cursor !== undefined) {
    const decoded = decodeSuppressionCursor(cursor, account, fingerprint, streams);
    if (!decoded.ok) {
      throw new ServiceError(Code.InvalidInput, undefined, {
        details: [{ field: 'cursor', message: decoded.message }],
      });
    }
    positions = decoded.positions;
  }
  const open = streams.filter((stream) => positions[stream]?.done !== true);
  const pages = await Promise.all(
    open.map(async (stream) => {
      const page = await querySuppressions({
        accountId: account,
        reason: stream,
        ...(from === undefined ? {} : { createdFrom: from.toISOString() }),
        ...(to === undefined ? {} : { createdTo: to.toISOString() }),
        ...(positions[stream]?.after === undefined ? {} : { after: positions[stream].after }),
        limit,
      });
      return { stream, items: page.items, more: page.more };
    }),
  );
  const merged = mergePages(pages, positions, limit, positionOf);
  return {
    suppressions: merged.items.map(suppressionView),
    count: merged.items.length,
    next_cursor: encodeSuppressionCursor(account, fingerprint, merged.positions),
  };
}

/**
 * `{"emails"}` → `{added, existing}` (reason `manual`). A dry run reads which are listed and
 * writes nothing. Each add is a conditional put, so an address another request added meanwhile
 * is reported as existing.
 */
export async function addManualSuppressions(
  account: string,
  emails: readonly string[],
  dryRun: boolean,
  now: Date = new Date(),
): Promise<{ added: string[]; existing: string[]; dry_run?: true }> {
  const addresses = distinctAddresses(emails);
  const listed = await findSuppressions(account, addresses);
  const missing = addresses.filter((email) => !listed.has(email));
  if (dryRun) {
    return { added: missing, existing: addresses.filter((email) => listed.has(email)), dry_run: true };
  }
  const createdAt = now.toISOString();
  const results = await eachLimited(missing, writeConcurrency, (email) =>
    addSuppressionIfAbsent(account, {
      email,
      reason: 'manual',
      stream: 'all',
      detail: 'Added through the API',
      message_uuid: null,
      created_at: createdAt,
    }),
  );
  const added = new Set(missing.filter((_, index) => results[index] === true));
  log('info', 'suppressions added', { account, added: added.size, requested: addresses.length });
  return {
    added: addresses.filter((email) => added.has(email)),
    existing: addresses.filter((email) => !added.has(email)),
  };
}

/** `{"emails"}` → `{deleted, not_found}`; a dry run reads and writes nothing. */
export async function removeSuppressions(
  account: string,
  emails: readonly string[],
  dryRun: boolean,
): Promise<{ deleted: string[]; not_found: string[]; dry_run?: true }> {
  const addresses = distinctAddresses(emails);
  if (dryRun) {
    const listed = await findSuppressions(account, addresses);
    return {
      deleted: addresses.filter((email) => listed.has(email)),
      not_found: addresses.filter((email) => !listed.has(email)),
      dry_run: true,
    };
  }
  const results = await eachLimited(addresses, writeConcurrency, (email) =>
    deleteSuppression(account, email),
  );
  const deleted = addresses.filter((_, index) => results[index] === true);
  log('info', 'suppressions deleted', { account, deleted: deleted.length, requested: addresses.length });
  return { deleted, not_found: addresses.filter((_, index) => results[index] !== true) };
}

/**
 * The automatic entries: hard bounces and complaints of one account's message. Idempotent (an
 * address already listed keeps its first entry), so a redelivered event or a retried send is
 * harmless. Returns the addresses newly added.
 */
export async function suppressAutomatically(
  account: string,
  causes: readonly SuppressionCause[],
  now: Date = new Date(),
): Promise<string[]> {
  const seen = new Set<string>();
  const unique = causes.filter((cause) => {
    const email = cause.email.toLowerCase();
    if (seen.has(email)) return false;
    seen.add(email);
    return true;
  });
  if (unique.length === 0) return [];
  const createdAt = now.toISOString();
  const results = await eachLimited(unique, writeConcurrency, (cause) =>
    addSuppressionIfAbsent(account, {
      email: cause.email.toLowerCase(),
      reason: cause.reason,
      stream: 'all',
      detail: clipDetail(cause.detail),
      message_uuid: cause.message_uuid,
      created_at: createdAt,
    }),
  );
  const added = unique
    .filter((_, index) => results[index] === true)
    .map((cause) => cause.email.toLowerCase());
  for (const cause of unique) {
    log('info', 'recipient suppressed', {
      account,
      message_uuid: cause.message_uuid,
      reason: cause.reason,
      added: added.includes(cause.email.toLowerCase()),
    });
  }
  return added;
}

/**
 * The sender's pre-send check: which of these recipients the account suppresses for a message of
 * `messageStream` (a broadcast also looks at the broadcast-only entries, in the same BatchGetItem).
 */
export async function suppressedRecipients(
  account: string,
  emails: readonly string[],
  messageStream: 'transactional' | 'broadcast' = 'transactional',
): Promise<Map<string, Suppression>> {
  const addresses = distinctAddresses(emails);
  if (addresses.length === 0) return new Map();
  return findSuppressions(account, addresses, messageStream === 'broadcast' ? ['all', 'broadcast'] : ['all']);
}

/**
 * A one-click unsubscribe (docs/streams.md): the address is suppressed for the account's broadcast
 * stream, the message it came from kept. One conditional put: true when added, false when the
 * address had unsubscribed already (a repeated POST changes nothing).
 */
export async function suppressUnsubscribed(
  account: string,
  email: string,
  messageUuid: string,
  now: Date = new Date(),
): Promise<boolean> {
  const added = await addSuppressionIfAbsent(account, {
    email: email.toLowerCase(),
    reason: 'unsubscribed',
    stream: 'broadcast',
    detail: 'One-click unsubscribe (RFC 8058)',
    message_uuid: messageUuid,
    created_at: now.toISOString(),
  });
  log('info', 'recipient unsubscribed', { account, message_uuid: messageUuid, added });
  return added;
}

/**
 * The admin import: addresses not yet listed are written with BatchWriteItem (25 per request);
 * listed ones keep their entry. Not atomic against concurrent adds of the same address (the
 * later write wins), which an operator's bulk load can accept.
 */
export async function importSuppressions(
  account: string,
  emails: readonly string[],
  options: { detail?: string; now?: Date } = {},
): Promise<{ added: number; existing: number }> {
  const addresses = distinctAddresses(emails);
  const listed = await findSuppressions(account, addresses);
  const createdAt = (options.now ?? new Date()).toISOString();
  const missing = addresses.filter((email) => !listed.has(email));
  await putSuppressions(
    account,
    missing.map((email) => ({
      email,
      reason: 'manual' as const,
      stream: 'all' as const,
      detail: options.detail ?? 'Imported by an operator',
      message_uuid: null,
      created_at: createdAt,
    })),
  );
  return { added: missing.length, existing: addresses.length - missing.length };
}
