import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/dynamo.ts';
import { guarded } from '../aws/faults.ts';
import { tableName } from '../config/storage.ts';
import { keys } from '../table/keys.ts';

export interface Account {
  accountId: string;
  active: boolean;
  createdAt: string;
}

export async function getAccount(accountId: string): Promise<Account | undefined> {
  const result = await guarded('database', () =>
    dynamo().send(new GetCommand({ TableName: tableName(), Key: keys.account(accountId) })),
  );
  if (result.Item === undefined) return undefined;
  return { accountId, active: result.Item.active !== false, createdAt: String(result.Item.created_at) };
}

/** Creates the account if it does not exist yet; an existing account is left as it is. */
export async function ensureAccount(accountId: string, now: Date = new Date()): Promise<void> {
  await guarded('database', () =>
    dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression:
          'SET account_id = :id, active = if_not_exists(active, :active), created_at = if_not_exists(created_at, :now)',
        ExpressionAttributeValues: { ':id': accountId, ':active': true, ':now': now.toISOString() },
      }),
    ),
  );
}

/** Enables or disables an account (creating its record if needed); its creation time is kept. */
export async function setAccountActive(
  accountId: string,
  active: boolean,
  now: Date = new Date(),
): Promise<void> {
  await guarded('database', () =>
    dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression:
          'SET account_id = :id, active = :active, created_at = if_not_exists(created_at, :now)',
        ExpressionAttributeValues: { ':id': accountId, ':active': active, ':now': now.toISOString() },
      }),
    ),
  );
}
