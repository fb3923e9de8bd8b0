import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/dynamo.ts';
import { guarded } from '../aws/faults.ts';
import { tableName } from '../config/storage.ts';
import { keys } from './keys.ts';

/**
 * Random keys of the deployment that no operator needs to manage: created on first use with a
 * conditional put (32 random bytes), so concurrent cold starts agree on one value, and kept for the
 * life of the table. Only for keys whose disclosure exposes little (the Feedback-ID key turns
 * account ids into opaque tags); signing and encryption keys live in KMS or Secrets Manager.
 */
export async function serviceKey(name: string): Promise<Buffer> {
  const read = async () =>
    (
      await guarded('database', () =>
        dynamo().send(
          new GetCommand({ TableName: tableName(), Key: keys.serviceKey(name), ConsistentRead: true }),
        ),
      )
    ).Item?.key;
  const existing = await read();
  if (typeof existing === 'string') return Buffer.from(existing, 'base64');
  try {
    const created = randomBytes(32).toString('base64');
    await guarded('database', () =>
      dynamo().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...keys.serviceKey(name), key: created, created_at: new Date().toISOString() },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return Buffer.from(created, 'base64');
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    // Another process created it first: its key is the one.
    const winner = await read();
    if (typeof winner !== 'string') throw error;
    return Buffer.from(winner, 'base64');
  }
}
