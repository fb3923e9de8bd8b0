import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import type { DomainStatus, RecordCheck, RecordPurpose } from '../model/records.ts';

export interface DomainRecord {
  domain: string;
  accountId: string;
  createdAt: string;
  activeSelector?: string;
  /** The domain receives mail (docs/inbound.md); off unless turned on. */
  receiving: boolean;
  /**
   * May send: always for an operator's domain (admin command, SEED_DOMAINS, no `origin` on the
   * item); for one added through the API, once its required records verified (docs/domains.md).
   */
  sendingReady: boolean;
  origin: 'operator' | 'api';
  /** Open and click tracking of the domain's mail (off when absent). */
  tracking?: { opens: boolean; clicks: boolean };
  /** The MAIL FROM domain (`<subdomain>.<domain>`), for domains added through the API. */
  mailFrom?: string;
  status?: DomainStatus;
  checkedAt?: string;
  nextCheckAt?: string;
  lostAt?: string;
  records?: Partial<Record<RecordPurpose, RecordCheck>>;
  lastVerifyAt?: string;
  /** A claim moved the domain and its SES identity still has the previous holder's key. */
  sesSwitchPending?: true;
}

export function toDomain(item: Record<string, unknown>): DomainRecord {
  const record: DomainRecord = {
    domain: String(item.domain),
    accountId: String(item.account_id),
    createdAt: String(item.created_at),
    receiving: item.receiving === true,
    sendingReady: item.sending_ready !== false,
    origin: item.origin === 'api' ? 'api' : 'operator',
  };
  if (typeof item.active_selector === 'string') record.activeSelector = item.active_selector;
  const tracking = item.tracking as { opens?: unknown; clicks?: unknown } | undefined;
  if (typeof tracking === 'object' && tracking !== null)
    record.tracking = { opens: tracking.opens === true, clicks: tracking.clicks === true };
  if (typeof item.mail_from === 'string') record.mailFrom = item.mail_from;
  if (typeof item.status === 'string') record.status = item.status as DomainStatus;
  if (typeof item.checked_at === 'string') record.checkedAt = item.checked_at;
  if (typeof item.next_check_at === 'string') record.nextCheckAt = item.next_check_at;
  if (typeof item.lost_at === 'string') record.lostAt = item.lost_at;
  if (typeof item.last_verify_at === 'string') record.lastVerifyAt = item.last_verify_at;
  if (item.ses_switch_pending === true) record.sesSwitchPending = true;
  if (typeof item.records === 'object' && item.records !== null)
    record.records = item.records as Partial<Record<RecordPurpose, RecordCheck>>;
  return record;
}

export function normaliseDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, '');
}

export async function getDomain(domain: string): Promise<DomainRecord | undefined> {
  const item = await table.get(keys.domain(normaliseDomain(domain)));
  return item === undefined ? undefined : toDomain(item);
}

/** Registers a domain for an account; false when the domain is already registered. */
export async function putDomain(domain: string, accountId: string, now: Date = new Date()): Promise<boolean> {
  const name = normaliseDomain(domain);
  const result = await table.put({
    Item: {
      ...keys.domain(name),
      domain: name,
      account_id: accountId,
      created_at: now.toISOString(),
      gsi1pk: keys.domainsOfAccount(accountId),
      gsi1sk: name,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  return result.outcome === 'applied';
}

/**
 * Turns receiving on or off for a registered domain (the admin command). The item keeps
 * `receiving: true` only while it is on. Undefined when the domain is not registered.
 */
export async function setDomainReceiving(
  domain: string,
  receiving: boolean,
): Promise<DomainRecord | undefined> {
  const result = await table.update({
    Key: keys.domain(normaliseDomain(domain)),
    UpdateExpression: receiving ? 'SET receiving = :on' : 'REMOVE receiving',
    ConditionExpression: 'attribute_exists(pk)',
    ...(receiving ? { ExpressionAttributeValues: { ':on': true } } : {}),
    ReturnValues: 'ALL_NEW',
  });
  return result.outcome === 'applied' && result.attributes !== undefined
    ? toDomain(result.attributes)
    : undefined;
}

export async function deleteDomain(domain: string): Promise<boolean> {
  const result = await table.delete({ Key: keys.domain(normaliseDomain(domain)), ReturnValues: 'ALL_OLD' });
  return result.outcome === 'applied' && result.attributes !== undefined;
}

/**
 * The account's domains from the account index, which projects only the name, owner, creation
 * time and active selector: the other fields are their defaults here (read the items for them).
 */
export async function listDomainsOfAccount(accountId: string): Promise<DomainRecord[]> {
  const page = await table.query({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.domainsOfAccount(accountId) },
  });
  return page.items.map(toDomain);
}

/** How many domains the account holds, counted up to `upTo` (enough to check a limit). */
export async function countDomainsOfAccount(accountId: string, upTo: number): Promise<number> {
  const page = await table.query({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.domainsOfAccount(accountId) },
    Select: 'COUNT',
    Limit: upTo,
  });
  return page.scannedCount;
}

/** Every registered domain. Operator tooling only: a Scan, never used on a request path. */
export async function listAllDomains(): Promise<DomainRecord[]> {
  const domains: DomainRecord[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.scan({
      FilterExpression: 'sk = :sk',
      ExpressionAttributeValues: { ':sk': 'DOMAIN' },
      ExclusiveStartKey: startKey,
    });
    domains.push(...page.items.map(toDomain));
    startKey = page.lastKey;
  } while (startKey !== undefined);
  return domains.sort((a, b) => a.domain.localeCompare(b.domain));
}

/**
 * Whole domain items by name (the account index projects only a few attributes): one
 * BatchGetItem per 100 names, unprocessed keys read again.
 */
export async function getDomains(names: readonly string[]): Promise<DomainRecord[]> {
  const found: DomainRecord[] = [];
  for (let start = 0; start < names.length; start += 100) {
    let pending: table.Item[] = names.slice(start, start + 100).map((name) => keys.domain(name));
    while (pending.length > 0) {
      const page = await table.batchGet(pending);
      found.push(...page.items.map(toDomain));
      pending = page.unprocessed;
    }
  }
  return found;
}
