import * as table from '../table/gateway.ts';
import { keys } from '../table/keys.ts';

/**
 * Copies an account's status onto each of its API keys (`account_disabled`), so a key check reads
 * one item and never the account's: a disabled account's keys are refused from the next read of
 * their item, within the key cache's 30 s, as a revoked key is (docs/security.md).
 */
export async function markAccountKeys(accountId: string, disabled: boolean): Promise<number> {
  const entries = await table.queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.apiKeysOfAccount(accountId) },
  });
  // gsi1 projects the keys only: the key id is the item's partition key after `APIKEY#`.
  const keyIds = entries.map((entry) => String(entry.pk).slice('APIKEY#'.length));
  for (const keyId of keyIds) await markKey(keyId, accountId, disabled);
  return keyIds.length;
}

/** Marks one key of the account; a key deleted meanwhile, or another account's, is left alone. */
export async function markKey(keyId: string, accountId: string, disabled: boolean): Promise<void> {
  await table.update({
    Key: keys.apiKey(keyId),
    UpdateExpression: disabled ? 'SET account_disabled = :yes' : 'REMOVE account_disabled',
    ConditionExpression: 'account_id = :account',
    ExpressionAttributeValues: disabled ? { ':yes': true, ':account': accountId } : { ':account': accountId },
  });
}

/**
 * For a key just put: if its account was disabled meanwhile (after the add's own authentication),
 * the disable's pass over the account's keys may have run before this key existed, so the key
 * takes the mark itself. A strongly consistent read, as the disable writes the account first.
 */
export async function markIfAccountDisabled(keyId: string, accountId: string): Promise<void> {
  const account = await table.get(keys.account(accountId), { ConsistentRead: true });
  if (account?.active === false) await markKey(keyId, accountId, true);
}
