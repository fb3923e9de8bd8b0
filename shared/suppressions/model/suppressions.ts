/**
 * The per-account suppression list (docs/suppressions.md): pure rules, no AWS. An address is
 * suppressed for one account after a hard bounce or a complaint on a message of that account, or
 * when the account adds it; the sender then skips it (recipient status `suppressed`).
 */
import { createHash } from 'node:crypto';
import { type HistoryEntry, recipientEntry, type StoredRecipient } from '../../messages/index.ts';
import type { Positions } from '../../platform/paging/cursor.ts';

export const suppressionReasons = ['hard_bounce', 'complaint', 'manual', 'unsubscribed'] as const;
export type SuppressionReason = (typeof suppressionReasons)[number];

/**
 * Which mail an entry stops (docs/streams.md): `all` streams (bounces, complaints, manual entries:
 * the address cannot or must not get mail) or `broadcast` only (an unsubscribe: a password reset
 * still reaches someone who left the newsletter).
 */
export const suppressionStreams = ['all', 'broadcast'] as const;
export type SuppressionStream = (typeof suppressionStreams)[number];

/** The reasons of each stream's entries: an unsubscribe is the only broadcast-only reason. */
export const reasonsOfStream: Readonly<Record<SuppressionStream, readonly SuppressionReason[]>> = {
  all: ['hard_bounce', 'complaint', 'manual'],
  broadcast: ['unsubscribed'],
};

/** A stored entry, as the API shows it (`created_at` is a UTC ISO string until formatted). */
export interface Suppression {
  email: string;
  reason: SuppressionReason;
  stream: SuppressionStream;
  detail: string | null;
  message_uuid: string | null;
  created_at: string;
}

/** What causes an automatic entry: one recipient of one message. */
export interface SuppressionCause {
  email: string;
  reason: Exclude<SuppressionReason, 'manual' | 'unsubscribed'>;
  detail: string;
  message_uuid: string;
}

export const maxDetailLength = 500;

/** Addresses compare case-insensitively: the whole address is stored lower-cased. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function clipDetail(detail: string): string {
  const flat = detail.replace(/\s+/g, ' ').trim();
  return flat.length > maxDetailLength ? `${flat.slice(0, maxDetailLength - 3)}...` : flat;
}

/** The distinct lower-cased addresses of a list, in first-seen order. */
export function distinctAddresses(emails: readonly string[]): string[] {
  return [...new Set(emails.map(normaliseEmail))];
}

// ---- Paging ------------------------------------------------------------------------------------

/**
 * The `suppressions` index sort key is `<reason>#<created_at>#<email>`. A page without a reason
 * filter merges the three reason streams newest first; the cursor holds, per stream, the
 * `<created_at>#<email>` of the last entry returned (or 0 once exhausted), bound to the account
 * and the filters by hashes, like the messages cursor.
 */
export { mergePages } from '../../platform/paging/merge.ts';

const positionShape = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#\S+@\S+$/;
const tag = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 16);

interface CursorBody {
  v: 1;
  k: 'suppressions';
  a: string;
  f: string;
  p: Record<string, string | 0>;
}

export function encodeSuppressionCursor(
  account: string,
  filters: unknown,
  positions: Positions,
): string | null {
  if (Object.values(positions).every((position) => position.done)) return null;
  const body: CursorBody = {
    v: 1,
    k: 'suppressions',
    a: tag(`account:${account}`),
    f: tag(`filters:${JSON.stringify(filters)}`),
    p: {},
  };
  for (const [stream, position] of Object.entries(positions)) {
    body.p[stream] = position.done ? 0 : (position.after ?? '');
  }
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

export function decodeSuppressionCursor(
  cursor: string,
  account: string,
  filters: unknown,
  streams: readonly string[],
): { ok: true; positions: Positions } | { ok: false; message: string } {
  const invalid = { ok: false as const, message: 'cursor is not valid' };
  let body: CursorBody;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return invalid;
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorBody;
  } catch {
    return invalid;
  }
  if (typeof body !== 'object' || body === null || body.v !== 1 || body.k !== 'suppressions') return invalid;
  if (typeof body.p !== 'object' || body.p === null) return invalid;
  if (body.a !== tag(`account:${account}`)) return invalid;
  if (body.f !== tag(`filters:${JSON.stringify(filters)}`)) {
    return { ok: false, message: 'cursor belongs to other filters' };
  }
  if (Object.keys(body.p).length !== streams.length) return invalid;
  const positions: Positions = {};
  for (const stream of streams) {
    const value = body.p[stream];
    if (value === 0) positions[stream] = { done: true };
    else if (value === '') positions[stream] = { done: false };
    else if (typeof value === 'string' && positionShape.test(value))
      positions[stream] = { after: value, done: false };
    else return invalid;
  }
  return { ok: true, positions };
}

/** The stream position of an entry: `<created_at>#<email>`. */
export const positionOf = (entry: Pick<Suppression, 'created_at' | 'email'>): string =>
  `${entry.created_at}#${entry.email}`;

// ---- At send time ------------------------------------------------------------------------------

/** Why a recipient was skipped, as its detail and history say. */
export function suppressedDetail(entry: Suppression): string {
  const on = entry.message_uuid === null ? '' : ` on message ${entry.message_uuid}`;
  const cause =
    entry.reason === 'manual'
      ? 'added manually'
      : entry.reason === 'unsubscribed'
        ? `unsubscribed from broadcasts${on}`
        : `${entry.reason === 'hard_bounce' ? 'hard bounce' : 'complaint'}${on}`;
  return `on the account's suppression list (${cause}); not sent`;
}

/**
 * The pre-send check's effect: pending recipients on the list become `suppressed` (each with a
 * history entry saying why); the others stay pending and go out. `allSuppressed` when nobody is
 * left to send to, so the message ends `suppressed` without a relay call.
 */
export function applySuppressions(
  recipients: readonly StoredRecipient[],
  listed: ReadonlyMap<string, Suppression>,
  at: string,
): { recipients: StoredRecipient[]; history: HistoryEntry[]; sendTo: string[]; allSuppressed: boolean } {
  const history: HistoryEntry[] = [];
  const noted = new Set<string>();
  const next = recipients.map((recipient) => {
    const entry = recipient.status === 'pending' ? listed.get(normaliseEmail(recipient.email)) : undefined;
    if (entry === undefined) return { ...recipient };
    const detail = suppressedDetail(entry);
    const address = normaliseEmail(recipient.email);
    if (!noted.has(address)) {
      noted.add(address);
      history.push(recipientEntry('suppressed', at, recipient.email, detail));
    }
    return { ...recipient, status: 'suppressed' as const, detail, updated_at: at };
  });
  const sendTo = next
    .filter((recipient) => recipient.status === 'pending')
    .map((recipient) => recipient.email);
  const allSuppressed =
    sendTo.length === 0 && next.length > 0 && next.every((r) => r.status === 'suppressed');
  if (allSuppressed) {
    history.push({
      status: 'suppressed',
      at,
      detail: 'Every recipient is on the suppression list; nothing was sent',
    });
  }
  return { recipients: next, history, sendTo, allSuppressed };
}

/**
 * Hard bounces the relay reported at send time (SMTP 5xx for a recipient) as suppression causes;
 * temporary refusals (4xx) are not.
 */
export function hardBouncesOf(
  messageUuid: string,
  results: ReadonlyArray<{ email: string; outcome: string; permanent: boolean; response?: string }>,
): SuppressionCause[] {
  return results
    .filter((result) => result.outcome === 'rejected' && result.permanent)
    .map((result) => ({
      email: normaliseEmail(result.email),
      reason: 'hard_bounce' as const,
      detail: clipDetail(result.response ?? 'Refused by the relay (5xx)'),
      message_uuid: messageUuid,
    }));
}
