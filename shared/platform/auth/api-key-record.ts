import * as table from '../table/gateway.ts';
import { keys } from '../table/keys.ts';

/**
 * What a key check needs of a stored API key: its account, rights, restrictions and the digests
 * of its secrets (the current one and, during a rotation's grace period, the previous one). The
 * management of keys (add, query, revoke, rotate) lives in shared/apikeys; the check lives here,
 * below every feature, because the one authentication middleware makes it.
 */
export interface ApiKeyRecord {
  keyId: string;
  account: string;
  scopes: string[];
  domains: string[];
  allowedCidrs: string[];
  digest: string;
  previousDigest?: string;
  /** Until when (ms) the previous digest is still accepted. */
  previousUntil?: number;
  expiresAt?: number;
  revokedAt?: number;
  rateLimitRps?: number;
  lastUsedAt?: number;
  /** The account's status, copied onto its keys when it is disabled (account-keys.ts). */
  accountDisabled?: boolean;
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];

const time = (value: unknown): number | undefined => {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
};

export function toApiKeyRecord(item: Record<string, unknown>): ApiKeyRecord {
  const record: ApiKeyRecord = {
    keyId: String(item.key_id),
    account: String(item.account_id),
    scopes: strings(item.scopes),
    domains: strings(item.domains),
    allowedCidrs: strings(item.allowed_cidrs),
    digest: String(item.digest),
  };
  if (typeof item.previous_digest === 'string') record.previousDigest = item.previous_digest;
  const previousUntil = time(item.previous_until);
  if (previousUntil !== undefined) record.previousUntil = previousUntil;
  const expiresAt = time(item.expires_at);
  if (expiresAt !== undefined) record.expiresAt = expiresAt;
  const revokedAt = time(item.revoked_at);
  if (revokedAt !== undefined) record.revokedAt = revokedAt;
  if (typeof item.rate_limit_rps === 'number') record.rateLimitRps = item.rate_limit_rps;
  const lastUsedAt = time(item.last_used_at);
  if (lastUsedAt !== undefined) record.lastUsedAt = lastUsedAt;
  if (item.account_disabled === true) record.accountDisabled = true;
  return record;
}

/** One GetItem by key id (strongly consistent: a revocation is seen by the next cache miss). */
export async function readApiKey(keyId: string): Promise<ApiKeyRecord | undefined> {
  const item = await table.get(keys.apiKey(keyId), { ConsistentRead: true });
  return item === undefined ? undefined : toApiKeyRecord(item);
}
