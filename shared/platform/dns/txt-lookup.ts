import { type DnsQueryOptions, queryDns } from './resolver.ts';

export { dnsConfig } from './resolver.ts';

export type TxtLookupResult =
  /** The name has TXT records: one array of character-strings per record. */
  | { kind: 'found'; records: string[][] }
  /** NXDOMAIN, or the name exists without TXT records. */
  | { kind: 'absent' }
  /** No answer: timeout, refused, SERVFAIL, unreachable server, bad configuration. */
  | { kind: 'failed'; reason: string };

export type TxtLookupOptions = DnsQueryOptions;

/** A TXT lookup for the DKIM check, which needs each record's character-strings apart. */
export async function lookupTxt(name: string, options: TxtLookupOptions = {}): Promise<TxtLookupResult> {
  const outcome = await queryDns((resolver) => resolver.resolveTxt(name), options);
  if (outcome.kind === 'answered') return { kind: 'found', records: outcome.value };
  if (outcome.kind === 'failed') return outcome;
  return { kind: 'absent' };
}
