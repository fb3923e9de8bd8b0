import { type DomainRecord, getDomain, normaliseDomain } from '../domains/index.ts';

/**
 * A domain's record as the sender sees it, cached 30 seconds per function instance (a few reads a
 * minute per domain, whatever the volume): the send-time owner check and the SES-id record for
 * threading read the same record, so they share one cache.
 */
const cacheMs = 30_000;
const cacheLimit = 5_000;
const records = new Map<string, { record: DomainRecord | undefined; until: number }>();

export async function cachedDomain(domain: string, nowMs: number): Promise<DomainRecord | undefined> {
  const name = normaliseDomain(domain);
  const hit = records.get(name);
  if (hit !== undefined && hit.until > nowMs) return hit.record;
  const record = await getDomain(name);
  if (records.size >= cacheLimit) records.clear();
  records.set(name, { record, until: nowMs + cacheMs });
  return record;
}
