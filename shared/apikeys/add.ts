import { markIfAccountDisabled } from '../platform/auth/account-keys.ts';
import { digestOf, formatApiKey, newKeyId, newSecret } from '../platform/auth/api-key-format.ts';
import { Code } from '../platform/errors/catalogue.ts';
import { type ErrorDetail, ServiceError } from '../platform/errors/service-error.ts';
import type { Caller } from '../platform/http/api-types.ts';
import { parseDateWithOffset } from '../platform/time/format.ts';
import { accountHoldsDomains } from './account-domains.ts';
import { domainsOfRequest } from './model/domains.ts';
import { scopesBeyond, scopesOfRequest } from './model/scopes.ts';
import { type KeyView, toKeyView } from './model/view.ts';
import type { ApikeyAddRequest } from './schemas.ts';
import { putKey } from './store/keys.ts';

export interface IssuedKey {
  /** The whole key, with its secret: answered once, never stored. */
  key: string;
  api_key: KeyView;
}

/**
 * Makes a key for the caller's account. The caller can give it no scope it lacks and no domain
 * outside its own restriction (113); every domain must be the account's and `expires_at` in the
 * future (107 with details).
 */
export async function addKey(caller: Caller, input: ApikeyAddRequest, now = new Date()): Promise<IssuedKey> {
  const scopes = scopesOfRequest(input, caller.scopes);
  const beyond = scopesBeyond(scopes, caller.scopes);
  if (beyond.length > 0) {
    throw new ServiceError(
      Code.AccessDenied,
      `You cannot give a key scopes you do not hold: ${beyond.join(', ')}`,
      {
        details: [{ field: 'scopes', message: `not held by the caller: ${beyond.join(', ')}` }],
      },
    );
  }
  const domains = domainsOfRequest(input.domains, caller.domains);
  if (caller.domains !== undefined) {
    const outside = (domains ?? []).filter((domain) => !caller.domains?.includes(domain));
    if (outside.length > 0) {
      throw new ServiceError(Code.AccessDenied, `This key may not use the domains ${outside.join(', ')}`, {
        details: [{ field: 'domains', message: `outside the caller's restriction: ${outside.join(', ')}` }],
      });
    }
  }
  const problems: ErrorDetail[] = [];
  if (input.domains !== undefined && domains !== undefined) {
    const foreign = await accountHoldsDomains(caller.account, domains);
    for (const domain of foreign)
      problems.push({ field: 'domains', message: `${domain} is not a domain of your account` });
  }
  const expiresAt = input.expires_at === undefined ? undefined : parseDateWithOffset(input.expires_at);
  if (expiresAt !== undefined && expiresAt.getTime() <= now.getTime()) {
    problems.push({ field: 'expires_at', message: 'expires_at must be in the future' });
  }
  if (problems.length > 0) throw new ServiceError(Code.InvalidInput, undefined, { details: problems });

  const secret = newSecret();
  const item = {
    keyId: newKeyId(),
    account: caller.account,
    name: input.name,
    digest: digestOf(secret),
    last4: secret.slice(-4),
    scopes,
    domains: domains ?? [],
    allowedCidrs: [...new Set(input.allowed_cidrs ?? [])],
    createdAt: now.toISOString(),
    ...(expiresAt === undefined ? {} : { expiresAt: expiresAt.toISOString() }),
    ...(input.rate_limit_rps === undefined ? {} : { rateLimitRps: input.rate_limit_rps }),
  };
  // 80 random bits: a collision is not expected, and the conditional put refuses rather than overwrites.
  if (!(await putKey(item))) throw new Error('API key id collision');
  await markIfAccountDisabled(item.keyId, item.account);
  return {
    key: formatApiKey(item.keyId, secret),
    api_key: toKeyView({
      key_id: item.keyId,
      name: item.name,
      last4: item.last4,
      scopes: item.scopes,
      domains: item.domains,
      allowed_cidrs: item.allowedCidrs,
      created_at: item.createdAt,
      expires_at: item.expiresAt,
    }),
  };
}
