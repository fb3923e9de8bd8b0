import type { Lookup } from '../platform/dns/record-lookup.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { checkDomain } from './check.ts';
import { dueDomains } from './store/domain-checks.ts';
import { getDomain } from './store/domains.ts';

/**
 * The background check (docs/domains.md, "Schedule"): every domain whose `next_check_at` has come,
 * read from the sharded due entries, is checked once and gets its next time. A domain is checked at
 * most once per interval, whatever the number of domains; the work of a run grows with the domains
 * due, not with the domains held.
 */
export interface BackgroundReport {
  due: number;
  checked: number;
  failed: number;
  /** Index entries and items read (the bench's measure). */
  itemsRead: number;
}

export interface BackgroundOptions {
  now?: Date;
  lookup?: Lookup;
  /** Due entries read per shard and run; the rest wait for the next run. */
  limitPerShard?: number;
}

export async function runBackgroundChecks(options: BackgroundOptions = {}): Promise<BackgroundReport> {
  const now = options.now ?? new Date();
  const { domains, scanned } = await dueDomains(now, options.limitPerShard ?? 200);
  const report: BackgroundReport = { due: domains.length, checked: 0, failed: 0, itemsRead: scanned };
  for (const domain of domains) {
    try {
      const record = await getDomain(domain);
      report.itemsRead += 1;
      // The entry may be stale (checked on request meanwhile): only what is still due is checked.
      if (record?.nextCheckAt === undefined || record.nextCheckAt > now.toISOString()) continue;
      await checkDomain(record, now, options.lookup);
      report.checked += 1;
    } catch (error) {
      report.failed += 1;
      log('warn', 'domain check failed; retried at the next run', { domain, ...describeError(error) });
    }
  }
  return report;
}
