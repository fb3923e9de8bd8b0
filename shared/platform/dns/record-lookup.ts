import { queryDns } from './resolver.ts';

/**
 * TXT and MX lookups for the domain checks. Unlike the DKIM check they keep "the name does not
 * exist" apart from "the name exists without this type", because the fix a user needs differs.
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
  const outcome = await queryDns(
    (resolver): Promise<string[]> =>
      type === 'TXT'
        ? resolver.resolveTxt(name).then((records) => records.map((strings) => strings.join('')))
        : resolver
            .resolveMx(name)
            .then((records) =>
              records.map((record) => `${record.priority} ${record.exchange.toLowerCase()}`),
            ),
  );
  if (outcome.kind !== 'answered') return outcome;
  return outcome.value.length === 0 ? { kind: 'no-type' } : { kind: 'found', values: outcome.value };
};
