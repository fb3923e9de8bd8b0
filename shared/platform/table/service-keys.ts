import { randomBytes } from 'node:crypto';
import * as table from './gateway.ts';
import { keys } from './keys.ts';

/**
 * Random keys of the deployment that no operator needs to manage: created on first use with a
 * conditional put (32 random bytes), so concurrent cold starts agree on one value, and kept for the
 * life of the table. Only for keys whose disclosure exposes little (the Feedback-ID key turns
 * account ids into opaque tags); signing and encryption keys live in KMS or Secrets Manager.
 */
export async function serviceKey(name: string): Promise<Buffer> {
  const read = async () => (await table.get(keys.serviceKey(name), { ConsistentRead: true }))?.key;
  const existing = await read();
  if (typeof existing === 'string') return Buffer.from(existing, 'base64');
  const created = randomBytes(32).toString('base64');
  const outcome = await table.put({
    Item: { ...keys.serviceKey(name), key: created, created_at: new Date().toISOString() },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  if (outcome.outcome === 'applied') return Buffer.from(created, 'base64');
  // Another process created it first: its key is the one.
  const winner = await read();
  if (typeof winner !== 'string') throw table.conditionFault(outcome);
  return Buffer.from(winner, 'base64');
}
