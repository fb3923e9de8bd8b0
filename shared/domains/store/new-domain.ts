import { ensureAccountUpdate } from '../../platform/auth/account-store.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import { type NewStoredKey, putKeyItem } from '../dkim/store/dkim-keys.ts';
import { takePoolKeyItem } from '../dkim/store/key-pool.ts';
import { dueEntry } from './domain-checks.ts';
import { type DomainRecord, toDomain } from './domains.ts';

export interface NewApiDomain {
  domain: string;
  accountId: string;
  mailFrom: string;
  receiving: boolean;
  now: Date;
  nextCheckAt: string;
  /** The domain's first keys: the active one first, then its companion (Ed25519). */
  keys: readonly NewStoredKey[];
  /** The pool item the RSA key came from, taken in the same write. */
  poolKeyId?: string;
}

export type NewDomainOutcome =
  | { outcome: 'created'; record: DomainRecord }
  /** Another request created the domain first. */
  | { outcome: 'exists' }
  /** Another add took the pooled key first: nothing was written. */
  | { outcome: 'pool-key-taken' };

/**
 * Creates a domain added through the API (not sending until verified) in one TransactWriteItems:
 * the domain item (only if absent) naming its active key, the key items, the pooled key taken out
 * of the pool (only if still there) and the account made if new. All of it or none of it.
 */
export async function createApiDomain(input: NewApiDomain): Promise<NewDomainOutcome> {
  const [active] = input.keys;
  if (active === undefined) throw new Error('A new domain needs its key');
  const item = {
    ...keys.domain(input.domain),
    domain: input.domain,
    account_id: input.accountId,
    created_at: input.now.toISOString(),
    gsi1pk: keys.domainsOfAccount(input.accountId),
    gsi1sk: input.domain,
    active_selector: active.selector,
    origin: 'api',
    sending_ready: false,
    status: 'pending',
    mail_from: input.mailFrom,
    next_check_at: input.nextCheckAt,
    records: {},
    ...(input.receiving ? { receiving: true } : {}),
    ...dueEntry(input.domain, input.nextCheckAt),
  };
  const items: table.TransactItem[] = [
    { Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
    ...input.keys.map(putKeyItem),
    { Update: ensureAccountUpdate(input.accountId, input.now) },
  ];
  const poolPosition = items.length;
  if (input.poolKeyId !== undefined) items.push(takePoolKeyItem(input.poolKeyId));
  const result = await table.transact(items);
  if (result.outcome === 'applied') return { outcome: 'created', record: toDomain(item) };
  if (result.failed.includes(0)) return { outcome: 'exists' };
  if (result.failed.includes(poolPosition)) return { outcome: 'pool-key-taken' };
  // A key's selector taken: a fault, as any other cancelled transaction.
  throw table.conditionFault(result);
}
