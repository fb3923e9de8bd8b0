import { Resolver } from 'node:dns/promises';
import { envList, envNumber } from '../config/env.ts';

/**
 * TXT lookups through a configurable resolver (Node's c-ares, UDP with TCP fallback for long
 * answers). `DNS_SERVERS` lists `host:port` entries (IPv6 as `[addr]:port`); empty means the
 * system's resolvers. Every lookup has a hard deadline (`DNS_TIMEOUT_MS`, default 1500 ms) after
 * which it is cancelled, so a slow or dead DNS server cannot hold a request.
 */
export const dnsConfig = {
  servers: envList('DNS_SERVERS'),
  timeoutMs: envNumber('DNS_TIMEOUT_MS', 1_500, { min: 50 }),
};

export type TxtLookupResult =
  /** The name has TXT records: one array of character-strings per record. */
  | { kind: 'found'; records: string[][] }
  /** NXDOMAIN, or the name exists without TXT records. */
  | { kind: 'absent' }
  /** No answer: timeout, refused, SERVFAIL, unreachable server, bad configuration. */
  | { kind: 'failed'; reason: string };

export interface TxtLookupOptions {
  servers?: readonly string[];
  timeoutMs?: number;
}

const absentCodes = new Set(['ENOTFOUND', 'ENODATA']);

export async function lookupTxt(name: string, options: TxtLookupOptions = {}): Promise<TxtLookupResult> {
  const servers = options.servers ?? dnsConfig.servers;
  const timeoutMs = options.timeoutMs ?? dnsConfig.timeoutMs;
  // One c-ares try per server, each with its share of the budget; the timer below is the hard cap.
  const resolver = new Resolver({
    timeout: Math.max(50, Math.floor(timeoutMs / Math.max(1, servers.length))),
    tries: 1,
  });
  try {
    if (servers.length > 0) resolver.setServers([...servers]);
  } catch {
    return { kind: 'failed', reason: 'EBADSERVERS' };
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<TxtLookupResult>((resolve) => {
    timer = setTimeout(() => {
      resolver.cancel();
      resolve({ kind: 'failed', reason: 'ETIMEOUT' });
    }, timeoutMs);
  });
  const lookup = resolver.resolveTxt(name).then(
    (records): TxtLookupResult => ({ kind: 'found', records }),
    (error: unknown): TxtLookupResult => {
      const code = (error as { code?: string }).code ?? 'EUNKNOWN';
      return absentCodes.has(code) ? { kind: 'absent' } : { kind: 'failed', reason: code };
    },
  );
  try {
    return await Promise.race([lookup, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
