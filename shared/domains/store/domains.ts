import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';

export interface DomainRecord {
  domain: string;
  accountId: string;
  createdAt: string;
  activeSelector?: string;
  /** The domain receives mail (docs/inbound.md); off unless an operator turned it on. */
  receiving: boolean;
  /** The domain's default open and click tracking (docs/tracking.md); absent: off. */
  tracking?: { opens: boolean; clicks: boolean };
}

export function toDomain(item: Record<string, unknown>): DomainRecord {
  const record: DomainRecord = {
    domain: String(item.domain),
    accountId: String(item.account_id),
    createdAt: String(item.created_at),
    receiving: item.receiving === true,
  };
  if (typeof item.active_selector === 'string') record.activeSelector = item.active_selector;
  const tracking = item.tracking as { opens?: unknown; clicks?: unknown } | undefined;
  if (tracking !== null && typeof tracking === 'object') {
    record.tracking = { opens: tracking.opens === true, clicks: tracking.clicks === true };
  }
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

export async function listDomainsOfAccount(accountId: string): Promise<DomainRecord[]> {
  const page = await table.query({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.domainsOfAccount(accountId) },
  });
  return page.items.map(toDomain);
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
