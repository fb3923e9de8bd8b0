import { createHash } from 'node:crypto';

/**
 * The opaque paging cursor of a query: base64url JSON holding where the index streams continue
 * (one stream per status and account shard): the one sort key of the last message returned, which
 * every stream continues after (`b`), or, per stream, its sort key or `0` once it is exhausted
 * (`p`). It is bound to the account and the filters by hashes, and every position is checked
 * against the sort-key shape, so a cursor cannot be replayed by another account or with other
 * filters. Even a forged cursor only moves the start point inside the caller's own partition:
 * the partition key is always the caller's account, never taken from the cursor.
 */
export type StreamPosition = { after?: string; done: boolean };
export type Positions = Record<string, StreamPosition>;

export const sortKeyShape = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[0-9a-f-]{36}$/;

const tag = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 16);

export function filterFingerprint(account: string, filters: unknown): { account: string; filters: string } {
  return { account: tag(`account:${account}`), filters: tag(`filters:${JSON.stringify(filters)}`) };
}

interface CursorBody {
  v: 1;
  a: string;
  f: string;
  /** Every stream continues after this sort key. */
  b?: string;
  p?: Record<string, string | 0>;
}

export function encodeCursor(account: string, filters: unknown, positions: Positions): string | null {
  if (Object.values(positions).every((position) => position.done)) return null;
  const fingerprint = filterFingerprint(account, filters);
  const body: CursorBody = { v: 1, a: fingerprint.account, f: fingerprint.filters };
  const all = Object.values(positions);
  const shared = all[0]?.after;
  if (shared !== undefined && all.every((position) => !position.done && position.after === shared)) {
    body.b = shared;
  } else {
    const perStream: Record<string, string | 0> = {};
    for (const [stream, position] of Object.entries(positions)) {
      perStream[stream] = position.done ? 0 : (position.after ?? '');
    }
    body.p = perStream;
  }
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

export type CursorResult = { ok: true; positions: Positions } | { ok: false; message: string };

export function decodeCursor(
  cursor: string,
  account: string,
  filters: unknown,
  streams: readonly string[],
): CursorResult {
  let body: CursorBody;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('shape');
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorBody;
  } catch {
    return { ok: false, message: 'cursor is not valid' };
  }
  if (
    typeof body !== 'object' ||
    body === null ||
    body.v !== 1 ||
    (body.b === undefined && (typeof body.p !== 'object' || body.p === null))
  ) {
    return { ok: false, message: 'cursor is not valid' };
  }
  const fingerprint = filterFingerprint(account, filters);
  if (body.a !== fingerprint.account) return { ok: false, message: 'cursor is not valid' };
  if (body.f !== fingerprint.filters) return { ok: false, message: 'cursor belongs to other filters' };
  const positions: Positions = {};
  if (body.b !== undefined) {
    if (typeof body.b !== 'string' || !sortKeyShape.test(body.b) || body.p !== undefined)
      return { ok: false, message: 'cursor is not valid' };
    for (const stream of streams) positions[stream] = { after: body.b, done: false };
    return { ok: true, positions };
  }
  const perStream = body.p as Record<string, unknown>;
  for (const stream of streams) {
    const value = perStream[stream];
    if (value === 0) positions[stream] = { done: true };
    else if (value === '') positions[stream] = { done: false };
    else if (typeof value === 'string' && sortKeyShape.test(value))
      positions[stream] = { after: value, done: false };
    else return { ok: false, message: 'cursor is not valid' };
  }
  if (Object.keys(perStream).length !== streams.length) return { ok: false, message: 'cursor is not valid' };
  return { ok: true, positions };
}
