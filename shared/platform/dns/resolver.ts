import { Resolver } from 'node:dns/promises';
import { envList, envNumber } from '../config/env.ts';

/**
 * DNS questions through a configurable resolver (Node's c-ares, UDP with TCP fallback for long
 * answers). `DNS_SERVERS` lists `host:port` entries (IPv6 as `[addr]:port`); empty means the
 * system's resolvers. Every question has a hard deadline (`DNS_TIMEOUT_MS`, default 1500 ms) after
 * which it is cancelled, so a slow or dead DNS server cannot hold a request.
 */
export const dnsConfig = {
  servers: envList('DNS_SERVERS'),
  timeoutMs: envNumber('DNS_TIMEOUT_MS', 1_500, { min: 50 }),
};

export interface DnsQueryOptions {
  servers?: readonly string[];
  timeoutMs?: number;
}

export type DnsOutcome<T> =
  | { kind: 'answered'; value: T }
  /** NXDOMAIN: the name does not exist. */
  | { kind: 'no-name' }
  /** The name exists without records of the type asked for. */
  | { kind: 'no-type' }
  /** No answer: timeout, refused, SERVFAIL, unreachable server, bad configuration. */
  | { kind: 'failed'; reason: string };

export async function queryDns<T>(
  ask: (resolver: Resolver) => Promise<T>,
  options: DnsQueryOptions = {},
): Promise<DnsOutcome<T>> {
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
  const deadline = new Promise<DnsOutcome<T>>((resolve) => {
    timer = setTimeout(() => {
      resolver.cancel();
      resolve({ kind: 'failed', reason: 'ETIMEOUT' });
    }, timeoutMs);
  });
  const answer = ask(resolver).then(
    (value): DnsOutcome<T> => ({ kind: 'answered', value }),
    (error: unknown): DnsOutcome<T> => {
      const code = (error as { code?: string }).code ?? 'EUNKNOWN';
      if (code === 'ENOTFOUND') return { kind: 'no-name' };
      if (code === 'ENODATA') return { kind: 'no-type' };
      return { kind: 'failed', reason: code };
    },
  );
  try {
    return await Promise.race([answer, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
