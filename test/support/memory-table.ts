import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { TableClient } from '../../shared/platform/table/gateway.ts';

/**
 * A table in memory behind the gateway's client port (`useTableClient`), for tests of stores that
 * need no server: items by `pk` and `sk`; GetItem, PutItem (unconditional, or on
 * `attribute_not_exists(pk)`) and DeleteItem (unconditional, `ReturnValues: 'ALL_OLD'` honoured).
 * Anything else is refused by name, so a test never passes on a request the fake only pretends to
 * carry out. `sent` keeps every request as the store made it.
 */
export interface MemoryTable extends TableClient {
  items: Map<string, Record<string, unknown>>;
  sent: Array<{ command: string; input: Record<string, unknown> }>;
}

const keyOf = (key: Record<string, unknown> | undefined) => `${String(key?.pk)}\u0000${String(key?.sk)}`;

export function memoryTable(): MemoryTable {
  const items = new Map<string, Record<string, unknown>>();
  const sent: MemoryTable['sent'] = [];
  return {
    items,
    sent,
    async send(command: object) {
      const input = (command as { input: Record<string, unknown> }).input;
      sent.push({ command: command.constructor.name, input });
      if (command instanceof GetCommand) return { Item: items.get(keyOf(command.input.Key)) };
      if (command instanceof PutCommand) {
        const item = command.input.Item as Record<string, unknown>;
        const condition = command.input.ConditionExpression;
        if (condition !== undefined && condition !== 'attribute_not_exists(pk)')
          throw new Error(`memoryTable: condition ${condition} is not supported`);
        const old = items.get(keyOf(item));
        if (condition !== undefined && old !== undefined)
          throw new ConditionalCheckFailedException({
            message: 'The conditional request failed',
            $metadata: {},
            ...(command.input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD'
              ? { Item: marshall(old) }
              : {}),
          });
        items.set(keyOf(item), structuredClone(item));
        return {};
      }
      if (command instanceof DeleteCommand) {
        if (command.input.ConditionExpression !== undefined)
          throw new Error('memoryTable: conditional deletes are not supported');
        const old = items.get(keyOf(command.input.Key));
        items.delete(keyOf(command.input.Key));
        return command.input.ReturnValues === 'ALL_OLD' && old !== undefined ? { Attributes: old } : {};
      }
      throw new Error(`memoryTable: ${command.constructor.name} is not supported`);
    },
  };
}
