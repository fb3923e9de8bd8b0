import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../../platform/aws/dynamo.ts';
import { guarded } from '../../platform/aws/faults.ts';
import { tableName } from '../../platform/config/storage.ts';
import { keys } from '../../platform/table/keys.ts';

export interface DomainRecord {
  domain: string;
  accountId: string;
  createdAt: string;
  activeSelector?: string;
  /** The domain receives mail (docs/inbound.md); off unless an operator turned it on. */
  receiving: boolean;
}

export function toDomain(item: Record<string, unknown>): DomainRecord {
  const record: DomainRecord = {
    domain: String(item.domain),
    accountId: String(item.account_id),
    createdAt: String(item.created_at),
    receiving: item.receiving === true,
  };
  if (typeof item.active_selector === 'string') record.activeSelector = item.active_selector;
  return record;
}

export function normaliseDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, '');
}

export async function getDomain(domain: string): Promise<DomainRecord | undefined> {
  const result = await guarded('database', () =>
    dynamo().send(new GetCommand({ TableName: tableName(), Key: keys.domain(normaliseDomain(domain)) })),
  );
  return result.Item === undefined ? undefined : toDomain(result.Item);
}

/** Registers a domain for an account; false when the domain is already registered. */
export async function putDomain(domain: string, accountId: string, now: Date = new Date()): Promise<boolean> {
  const name = normaliseDomain(domain);
  try {
    await guarded('database', () =>
      dynamo().send(
        new PutCommand({
          TableName: tableName(),
          Item: {
            ...keys.domain(name),
            domain: name,
            account_id: accountId,
            created_at: now.toISOString(),
            gsi1pk: keys.domainsOfAccount(accountId),
            gsi1sk: name,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/**
 * Turns receiving on or off for a registered domain (the admin command). The item keeps
 * `receiving: true` only while it is on. Undefined when the domain is not registered.
 */
export async function setDomainReceiving(
  domain: string,
  receiving: boolean,
): Promise<DomainRecord | undefined> {
  try {
    const result = await guarded('database', () =>
      dynamo().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.domain(normaliseDomain(domain)),
          UpdateExpression: receiving ? 'SET receiving = :on' : 'REMOVE receiving',
          ConditionExpression: 'attribute_exists(pk)',
          ...(receiving ? { ExpressionAttributeValues: { ':on': true } } : {}),
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result.Attributes === undefined ? undefined : toDomain(result.Attributes);
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

export async function deleteDomain(domain: string): Promise<boolean> {
  const result = await guarded('database', () =>
    dynamo().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.domain(normaliseDomain(domain)),
        ReturnValues: 'ALL_OLD',
      }),
    ),
  );
  return result.Attributes !== undefined;
}

export async function listDomainsOfAccount(accountId: string): Promise<DomainRecord[]> {
  const result = await guarded('database', () =>
    dynamo().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.domainsOfAccount(accountId) },
      }),
    ),
  );
  return (result.Items ?? []).map(toDomain);
}

/** Every registered domain. Operator tooling only: a Scan, never used on a request path. */
export async function listAllDomains(): Promise<DomainRecord[]> {
  const domains: DomainRecord[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await guarded('database', () =>
      dynamo().send(
        new ScanCommand({
          TableName: tableName(),
          FilterExpression: 'sk = :sk',
          ExpressionAttributeValues: { ':sk': 'DOMAIN' },
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    domains.push(...(page.Items ?? []).map(toDomain));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return domains.sort((a, b) => a.domain.localeCompare(b.domain));
}
