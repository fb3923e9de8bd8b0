import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { domainNotFound } from './errors.ts';
import type { DomainStatus } from './model/records.ts';
import { getClaim } from './store/claims.ts';
import { getDomain, getDomains, listDomainsOfAccount, normaliseDomain } from './store/domains.ts';
import { claimView, type DomainView, domainView } from './view.ts';

/** POST /domain/query-1.0: one domain of the account (or its claim), or a page of its domains. */
export async function getDomainView(name: string, account: string): Promise<DomainView> {
  const domain = normaliseDomain(name);
  const record = await getDomain(domain);
  if (record?.accountId === account) return domainView(record);
  if (record !== undefined) {
    const claim = await getClaim(domain, account);
    if (claim !== undefined) return claimView(claim);
  }
  throw domainNotFound();
}

export interface DomainPage {
  domains: DomainView[];
  count: number;
  next_cursor: string | null;
}

const encode = (domain: string) => Buffer.from(JSON.stringify({ after: domain })).toString('base64url');

function decode(cursor: string): string {
  try {
    const after = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown })
      .after;
    if (typeof after === 'string' && after.length <= 253) return after;
  } catch {}
  throw new ServiceError(Code.InvalidInput, undefined, {
    details: [{ field: 'cursor', message: 'cursor is not valid' }],
  });
}

/**
 * The account's domains by name. An account holds at most MAX_DOMAINS_PER_ACCOUNT domains, so the
 * page is cut from one Query of its partition; the cursor only moves the start inside it.
 */
export async function listDomainViews(
  account: string,
  filters: { status?: DomainStatus; limit?: number; cursor?: string },
): Promise<DomainPage> {
  const after = filters.cursor === undefined ? undefined : decode(filters.cursor);
  const limit = filters.limit ?? 50;
  // The account index holds names only: the whole items are read for the status and the view.
  const names = (await listDomainsOfAccount(account))
    .map((record) => record.domain)
    .filter((domain) => after === undefined || domain > after);
  const all = (await getDomains(names))
    .filter((record) => record.accountId === account)
    .filter((record) => filters.status === undefined || (record.status ?? 'pending') === filters.status)
    .sort((a, b) => a.domain.localeCompare(b.domain));
  const page = all.slice(0, limit);
  const last = page[page.length - 1];
  return {
    domains: await Promise.all(page.map(domainView)),
    count: page.length,
    next_cursor: all.length > limit && last !== undefined ? encode(last.domain) : null,
  };
}
