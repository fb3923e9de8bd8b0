import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import { parseApiKey } from './api-key-format.ts';
import { type ApiKeyRecord, readApiKey } from './api-key-record.ts';

/**
 * A key record (or its absence) is trusted for at most 30 s per function instance: so a revoked
 * or deleted key stops working within 30 s, and a busy key costs one GetItem per 30 s per instance.
 */
export const keyCacheMs = 30_000;
const maxCached = 5_000;

interface Cached {
  record: ApiKeyRecord | undefined;
  allowed: BlockList | undefined;
  /** When the record was read (ms). */
  read: number;
  until: number;
}

const cache = new Map<string, Cached>();

function allowListOf(cidrs: readonly string[]): BlockList | undefined {
  if (cidrs.length === 0) return undefined;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefix] = cidr.split('/');
    const family = isIP(address);
    if (family === 0) continue;
    list.addSubnet(address, Number(prefix ?? (family === 4 ? 32 : 128)), family === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

async function lookup(keyId: string, now: number, fresh = false): Promise<Cached> {
  const hit = cache.get(keyId);
  if (hit !== undefined && hit.until > now && !fresh) return hit;
  const record = await readApiKey(keyId);
  const entry = {
    record,
    allowed: record === undefined ? undefined : allowListOf(record.allowedCidrs),
    read: now,
    until: now + keyCacheMs,
  };
  if (cache.size >= maxCached) cache.clear();
  cache.set(keyId, entry);
  return entry;
}

/**
 * A secret that does not match the cached record may be a rotation's new one, which works at
 * once: the record is read again. Wrong secrets are failed authentications, charged to the
 * caller's address by the rate limit, which bounds these reads.
 */
async function lookupFor(keyId: string, secret: string, now: number): Promise<Cached> {
  const cached = await lookup(keyId, now);
  if (cached.read === now || matchesAny(cached.record, secret, now)) return cached;
  return lookup(keyId, now, true);
}

function matchesAny(record: ApiKeyRecord | undefined, secret: string, now: number): boolean {
  if (record === undefined) return false;
  if (secretMatches(secret, record.digest)) return true;
  return (
    record.previousUntil !== undefined &&
    now < record.previousUntil &&
    secretMatches(secret, record.previousDigest)
  );
}

/** Constant-time comparison of a presented secret's SHA-256 with a stored digest. */
export function secretMatches(secret: string, storedDigest: string | undefined): boolean {
  if (storedDigest === undefined) return false;
  const stored = Buffer.from(storedDigest, 'base64url');
  const presented = createHash('sha256').update(secret).digest();
  return stored.length === presented.length && timingSafeEqual(stored, presented);
}

function addressAllowed(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Checks an API key: well formed, known, its secret (or, within a rotation's grace period, its
 * previous secret) matching, not revoked and its account not disabled (110), not expired (105),
 * and called from an allowed network (103). The account's status comes with the key's item (a
 * disabled account's keys carry it), so a key check is one read, where a JWT's is one read of the
 * account's status.
 */
export async function verifyApiKey(token: string, sourceIp: string, now = Date.now()): Promise<ApiKeyRecord> {
  const parsed = parseApiKey(token);
  if (parsed === undefined) throw new ServiceError(Code.TokenInvalid, 'API key is malformed');
  const { record, allowed } = await lookupFor(parsed.keyId, parsed.secret, now);
  if (record === undefined) throw new ServiceError(Code.TokenInvalid, 'API key is unknown');
  if (!matchesAny(record, parsed.secret, now))
    throw new ServiceError(Code.TokenInvalid, 'API key is invalid');
  if (record.revokedAt !== undefined && record.revokedAt <= now) {
    throw new ServiceError(Code.TokenInvalid, 'API key is revoked');
  }
  if (record.accountDisabled === true) throw new ServiceError(Code.TokenInvalid, 'Account is disabled');
  if (record.expiresAt !== undefined && record.expiresAt <= now) {
    throw new ServiceError(Code.TokenExpired, 'API key has expired');
  }
  if (allowed !== undefined && !addressAllowed(allowed, sourceIp)) {
    throw new ServiceError(Code.IpBlocked, 'API key is not allowed from this address');
  }
  return record;
}

/** Forgets every cached key (tests, and the local host when it rewrites keys). */
export function forgetCachedKeys(): void {
  cache.clear();
}
