import { lookupTxt, type TxtLookupResult } from '../../platform/dns/txt-lookup.ts';
import { compareDnsRecords, type DkimAlgorithm, type DkimDnsStatus } from './model/dkim.ts';

/**
 * `dkim_dns_status` of a key: a TXT lookup of `<selector>._domainkey.<domain>` compared with our
 * public key. Results are cached per function instance:
 * - `verified` and `unreachable` for 30 s: the first is the steady state, the second is the slow
 *   case (a lookup that ran into its deadline) that must not be paid on every request;
 * - `pending` and `mismatch` are not cached: a working resolver answers them quickly, and they are
 *   exactly the states an operator watches change after publishing a record.
 * Concurrent checks of the same record share one lookup.
 */
export const dnsCacheTtlMs = 30_000;

type Lookup = (name: string) => Promise<TxtLookupResult>;

export interface DnsCheckerOptions {
  lookup?: Lookup;
  now?: () => number;
  ttlMs?: number;
  maxEntries?: number;
}

export type DnsChecker = (
  dnsName: string,
  algorithm: DkimAlgorithm,
  publicKey: string,
) => Promise<DkimDnsStatus>;

const cacheable = new Set<DkimDnsStatus>(['verified', 'unreachable']);

export function createDnsChecker(options: DnsCheckerOptions = {}): DnsChecker {
  const lookup = options.lookup ?? ((name: string) => lookupTxt(name));
  const now = options.now ?? Date.now;
  const ttlMs = Math.min(options.ttlMs ?? dnsCacheTtlMs, dnsCacheTtlMs);
  const maxEntries = options.maxEntries ?? 1_000;
  const cache = new Map<string, { status: DkimDnsStatus; expiresAt: number }>();
  const inFlight = new Map<string, Promise<DkimDnsStatus>>();

  return async (dnsName, algorithm, publicKey) => {
    const key = `${dnsName.toLowerCase()} ${algorithm} ${publicKey}`;
    const hit = cache.get(key);
    if (hit !== undefined && hit.expiresAt > now()) return hit.status;
    if (hit !== undefined) cache.delete(key);
    let running = inFlight.get(key);
    if (running === undefined) {
      running = lookup(dnsName).then((result) => {
        const status: DkimDnsStatus =
          result.kind === 'failed'
            ? 'unreachable'
            : compareDnsRecords(result.kind === 'found' ? result.records : [], algorithm, publicKey);
        if (cacheable.has(status)) {
          if (cache.size >= maxEntries) {
            const oldest = cache.keys().next().value;
            if (oldest !== undefined) cache.delete(oldest);
          }
          cache.set(key, { status, expiresAt: now() + ttlMs });
        }
        return status;
      });
      inFlight.set(key, running);
      running.finally(() => inFlight.delete(key)).catch(() => undefined);
    }
    return running;
  };
}

/** The checker the status endpoint uses (DNS_SERVERS, DNS_TIMEOUT_MS). */
export const checkDkimDns: DnsChecker = createDnsChecker();
