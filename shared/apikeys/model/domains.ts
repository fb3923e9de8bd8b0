import { normaliseRestrictedDomain } from '../../platform/auth/domain-restriction.ts';

/**
 * The domains a new key is restricted to: the ones asked for, or else the creator's own
 * restriction (a restricted key can only make keys restricted at least as narrowly). Undefined
 * means unrestricted.
 */
export function domainsOfRequest(
  wanted: readonly string[] | undefined,
  creatorDomains: readonly string[] | undefined,
): string[] | undefined {
  if (wanted === undefined || wanted.length === 0) {
    return creatorDomains === undefined ? undefined : [...creatorDomains];
  }
  return [...new Set(wanted.map(normaliseRestrictedDomain))].sort();
}
