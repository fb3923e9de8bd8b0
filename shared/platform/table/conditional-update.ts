import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/dynamo.ts';
import { guarded } from '../aws/faults.ts';

/**
 * One conditional UpdateItem: true when it applied, false when its condition failed (the item moved
 * on since it was read); any other error is thrown.
 */
export async function updateIf(input: UpdateCommandInput): Promise<boolean> {
  try {
    await guarded('database', () => dynamo().send(new UpdateCommand(input)));
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** `SET a = :a, b = :b` and its values, for attributes whose names need no placeholder. */
export function setAttributes(attributes: Record<string, unknown>): {
  expression: string;
  values: Record<string, unknown>;
} {
  const names = Object.keys(attributes);
  return {
    expression: `SET ${names.map((name) => `${name} = :${name}`).join(', ')}`,
    values: Object.fromEntries(names.map((name) => [`:${name}`, attributes[name]])),
  };
}
