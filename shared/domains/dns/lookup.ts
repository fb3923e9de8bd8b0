import { Resolver } from 'node:dns/promises';
import { dnsConfig } from '../../platform/dns/txt-lookup.ts';

/**
 * TXT and MX lookups for the domain checks, through `DNS_SERVERS` with the same hard deadline as
 * the DKIM check (`DNS_TIMEOUT_MS`). Unlike the DKIM check they keep "the name does not exist"
 * apart from "the name exists without this type", because the fix a user needs differs.
 */
export type RecordType = 'TXT' | 'MX';

export type LookupAnswer =
  /** One entry per record: a TXT record's strings joined, an MX record as `<priority> <exchange>`. */
  | { kind: 'found'; values: string[] }
  | { kind: 'no-name' }
  | { kind: 'no-type' }
  | { kind: 'failed'; reason: string };

export type Lookup = (name: string, type: RecordType) => Promise<LookupAnswer>;

export const lookupRecords: Lookup = async (name, type) => {
  const servers = dnsConfig.servers;
  const timeoutMs = dnsConfig.timeoutMs;
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
  const deadline = new Promise<LookupAnswer>((resolve) => {
    timer = setTimeout(() => {
      resolver.cancel();
      resolve({ kind: 'failed', reason: 'ETIMEOUT' });
    }, timeoutMs);
  });
  const query: Promise<string[]> =
    type === 'TXT'
      ? resolver.resolveTxt(name).then((records) => records.map((strings) => strings.join('')))
      : resolver
          .resolveMx(name)
          .then((records) => records.map((record) => `${record.priority} ${record.exchange.toLowerCase()}`));
  const answer = query.then(
    (values): LookupAnswer => (values.length === 0 ? { kind: 'no-type' } : { kind: 'found', values }),
    (error: unknown): LookupAnswer => {
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
};
