import * as table from '../table/gateway.ts';
import { keys } from '../table/keys.ts';
import { markAccountKeys } from './account-keys.ts';

export interface Account {
  accountId: string;
  active: boolean;
  createdAt: string;
}

export async function getAccount(accountId: string): Promise<Account | undefined> {
  const item = await table.get(keys.account(accountId));
  if (item === undefined) return undefined;
  return { accountId, active: item.active !== false, createdAt: String(item.created_at) };
}

/** Creates the account if it does not exist yet; an existing account is left as it is. */
export async function ensureAccount(accountId: string, now: Date = new Date()): Promise<void> {
  await table.update(ensureAccountUpdate(accountId, now));
}

/** ensureAccount's write, for a transaction that creates something of the account with it. */
export function ensureAccountUpdate(accountId: string, now: Date = new Date()) {
  return {
    Key: keys.account(accountId),
    UpdateExpression:
      'SET account_id = :id, active = if_not_exists(active, :active), created_at = if_not_exists(created_at, :now)',
    ExpressionAttributeValues: { ':id': accountId, ':active': true, ':now': now.toISOString() },
  };
}

/**
 * Enables or disables an account (creating its record if needed); its creation time is kept. The
 * account's item goes first (its JWTs), then the copy on each of its API keys (account-keys.ts):
 * run again after a failure, both writes are idempotent.
 */
export async function setAccountActive(
  accountId: string,
  active: boolean,
  now: Date = new Date(),
): Promise<void> {
  await table.update({
    Key: keys.account(accountId),
    UpdateExpression: 'SET account_id = :id, active = :active, created_at = if_not_exists(created_at, :now)',
    ExpressionAttributeValues: { ':id': accountId, ':active': active, ':now': now.toISOString() },
  });
  await markAccountKeys(accountId, !active);
}
