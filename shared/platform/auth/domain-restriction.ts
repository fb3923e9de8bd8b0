import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Caller } from '../http/api-types.ts';

export function normaliseRestrictedDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, '');
}

/** Whether the caller may act for `domain`: a JWT always, an API key when its restriction allows. */
export function mayUseDomain(caller: Pick<Caller, 'domains'>, domain: string): boolean {
  return caller.domains === undefined || caller.domains.includes(normaliseRestrictedDomain(domain));
}

/**
 * 113 when an API key restricted to some domains acts for another one (sends from it, reads its
 * DKIM or domain records): the one check every feature makes for a domain restriction.
 */
export function requireDomainAllowed(
  caller: Pick<Caller, 'domains'>,
  domain: string,
  field = 'domain',
): void {
  if (mayUseDomain(caller, domain)) return;
  throw new ServiceError(
    Code.AccessDenied,
    `This API key may not use the domain ${normaliseRestrictedDomain(domain)}`,
    {
      details: [{ field, message: `the key is restricted to ${caller.domains?.join(', ')}` }],
    },
  );
}
