import { getDomain, listDomainsOfAccount } from '../domains/index.ts';
import type { Caller } from '../platform/http/api-types.ts';

/** The domains of `domains` that are not registered to the account. */
export async function accountHoldsDomains(account: string, domains: readonly string[]): Promise<string[]> {
  const records = await Promise.all(domains.map((domain) => getDomain(domain)));
  return domains.filter((_, index) => records[index]?.accountId !== account);
}

/**
 * The domains a credential may send from: an API key's restriction, else every domain registered
 * to the account (what the SMTP submission server checks MAIL FROM against).
 */
export async function sendableDomainsOf(caller: Caller): Promise<string[]> {
  if (caller.domains !== undefined) return [...caller.domains];
  return (await listDomainsOfAccount(caller.account)).map((record) => record.domain).sort();
}
