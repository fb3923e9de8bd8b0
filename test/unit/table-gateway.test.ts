import assert from 'node:assert/strict';
import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, beforeEach, describe, it } from 'vitest';
import { deleteDomain, getDomain, putDomain } from '../../shared/domains/store/domains.ts';
import { Code } from '../../shared/platform/errors/catalogue.ts';
import { isServiceError } from '../../shared/platform/errors/service-error.ts';
import { onLogLine } from '../../shared/platform/observability/log.ts';
import * as table from '../../shared/platform/table/gateway.ts';
import { memoryTable } from '../support/memory-table.ts';

/**
 * The table gateway (shared/platform/table/gateway.ts) with its client replaced: what it sends,
 * how a failed condition becomes an outcome, and how every other failure keeps the catalogue's
 * mapping. No emulator is involved.
 */

interface Sent {
  command: string;
  input: Record<string, unknown>;
}

/** A client that records each command and answers from `answers`, in order (an Error is thrown). */
function scripted(...answers: unknown[]): table.TableClient & { sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    async send(command: object) {
      sent.push({ command: command.constructor.name, input: (command as { input: Sent['input'] }).input });
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return answer ?? {};
    },
  };
}

const metadata = { $metadata: {} };
const codeOf = (error: unknown) => (isServiceError(error) ? error.code : 'untouched');
const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
};

let savedTable: string | undefined;
beforeEach(() => {
  savedTable = process.env.TABLE_NAME;
  process.env.TABLE_NAME = 'gateway-test';
});
afterEach(() => {
  table.useTableClient();
  if (savedTable === undefined) delete process.env.TABLE_NAME;
  else process.env.TABLE_NAME = savedTable;
});

describe('table gateway: requests', () => {
  it('names the table and passes the rest of the request as it is', async () => {
    const client = scripted({ Item: { pk: 'A', sk: 'B', n: 1 } }, {}, { Attributes: { n: 2 } });
    table.useTableClient(client);
    assert.deepEqual(await table.get({ pk: 'A', sk: 'B' }, { ConsistentRead: true }), {
      pk: 'A',
      sk: 'B',
      n: 1,
    });
    assert.deepEqual(
      await table.put({ Item: { pk: 'A', sk: 'B' }, ConditionExpression: 'attribute_not_exists(pk)' }),
      {
        outcome: 'applied',
      },
    );
    assert.deepEqual(
      await table.update({
        Key: { pk: 'A', sk: 'B' },
        UpdateExpression: 'ADD n :one',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
      { outcome: 'applied', attributes: { n: 2 } },
    );
    assert.deepEqual(client.sent, [
      {
        command: 'GetCommand',
        input: { TableName: 'gateway-test', Key: { pk: 'A', sk: 'B' }, ConsistentRead: true },
      },
      {
        command: 'PutCommand',
        input: {
          TableName: 'gateway-test',
          Item: { pk: 'A', sk: 'B' },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        command: 'UpdateCommand',
        input: {
          TableName: 'gateway-test',
          Key: { pk: 'A', sk: 'B' },
          UpdateExpression: 'ADD n :one',
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'UPDATED_NEW',
        },
      },
    ]);
  });

  it('adds the table to every item of a transaction, whatever its kind', async () => {
    const client = scripted({});
    table.useTableClient(client);
    assert.deepEqual(
      await table.transact([
        { ConditionCheck: { Key: { pk: 'A', sk: '1' }, ConditionExpression: 'attribute_exists(pk)' } },
        { Put: { Item: { pk: 'A', sk: '2' } } },
        {
          Update: {
            Key: { pk: 'A', sk: '3' },
            UpdateExpression: 'SET x = :x',
            ExpressionAttributeValues: { ':x': 1 },
          },
        },
        { Delete: { Key: { pk: 'A', sk: '4' } } },
      ]),
      { outcome: 'applied' },
    );
    const items = client.sent[0]?.input.TransactItems as Array<Record<string, { TableName?: string }>>;
    assert.deepEqual(
      items.map((item) => Object.entries(item).map(([kind, operation]) => `${kind}:${operation.TableName}`)),
      [
        ['ConditionCheck:gateway-test'],
        ['Put:gateway-test'],
        ['Update:gateway-test'],
        ['Delete:gateway-test'],
      ],
    );
  });

  it('pages a query through LastEvaluatedKey, one request after another', async () => {
    const client = scripted(
      { Items: [{ sk: '1' }], LastEvaluatedKey: { pk: 'P', sk: '1' }, ScannedCount: 1 },
      { Items: [{ sk: '2' }], ScannedCount: 1 },
    );
    table.useTableClient(client);
    const items = await table.queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'P' },
    });
    assert.deepEqual(items, [{ sk: '1' }, { sk: '2' }]);
    assert.equal(client.sent[0]?.input.ExclusiveStartKey, undefined);
    assert.deepEqual(client.sent[1]?.input.ExclusiveStartKey, { pk: 'P', sk: '1' });
  });

  it('one page: its items, where the next starts, and what DynamoDB evaluated', async () => {
    table.useTableClient(
      scripted({ Items: [{ sk: '1' }], LastEvaluatedKey: { pk: 'P', sk: '1' }, ScannedCount: 1 }, {}),
    );
    assert.deepEqual(await table.query({ KeyConditionExpression: 'pk = :pk' }), {
      items: [{ sk: '1' }],
      lastKey: { pk: 'P', sk: '1' },
      scannedCount: 1,
    });
    assert.deepEqual(await table.scan({}), { items: [], scannedCount: 0 });
  });

  it('batch requests answer what DynamoDB left unprocessed', async () => {
    const client = scripted(
      {
        Responses: { 'gateway-test': [{ pk: 'A', sk: '1' }] },
        UnprocessedKeys: { 'gateway-test': { Keys: [{ pk: 'A', sk: '2' }], ConsistentRead: true } },
      },
      { UnprocessedItems: { 'gateway-test': [{ DeleteRequest: { Key: { pk: 'A', sk: '3' } } }] } },
    );
    table.useTableClient(client);
    assert.deepEqual(
      await table.batchGet(
        [
          { pk: 'A', sk: '1' },
          { pk: 'A', sk: '2' },
        ],
        { consistent: true },
      ),
      { items: [{ pk: 'A', sk: '1' }], unprocessed: [{ pk: 'A', sk: '2' }] },
    );
    assert.deepEqual(await table.batchWrite([{ DeleteRequest: { Key: { pk: 'A', sk: '3' } } }]), {
      unprocessed: [{ DeleteRequest: { Key: { pk: 'A', sk: '3' } } }],
    });
    assert.deepEqual(client.sent[0]?.input.RequestItems, {
      'gateway-test': {
        Keys: [
          { pk: 'A', sk: '1' },
          { pk: 'A', sk: '2' },
        ],
        ConsistentRead: true,
      },
    });
  });
});

describe('table gateway: failed conditions are outcomes', () => {
  it('a write whose condition failed answers the item as it was, unmarshalled', async () => {
    const failure = new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      ...metadata,
      Item: marshall({
        pk: 'A',
        sk: 'B',
        status: 'sent',
        tat: 1_700_000_000_123,
        st: new Uint8Array([1, 2]),
      }),
    });
    table.useTableClient(scripted(failure));
    const outcome = await table.update({ Key: { pk: 'A', sk: 'B' }, UpdateExpression: 'SET x = :x' });
    assert.equal(outcome.outcome, 'condition-failed');
    assert.ok(outcome.outcome === 'condition-failed');
    assert.deepEqual(outcome.item, {
      pk: 'A',
      sk: 'B',
      status: 'sent',
      tat: 1_700_000_000_123,
      st: new Uint8Array([1, 2]),
    });
    assert.equal(outcome.cause, failure);
  });

  it('without ReturnValuesOnConditionCheckFailure (or no item): no item', async () => {
    table.useTableClient(
      scripted(
        new ConditionalCheckFailedException({ message: 'x', ...metadata }),
        new ConditionalCheckFailedException({ message: 'x', ...metadata }),
      ),
    );
    const put = await table.put({
      Item: { pk: 'A', sk: 'B' },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    assert.equal(put.outcome, 'condition-failed');
    assert.equal('item' in put, false);
    const deleted = await table.delete({
      Key: { pk: 'A', sk: 'B' },
      ConditionExpression: 'attribute_exists(pk)',
    });
    assert.equal(deleted.outcome, 'condition-failed');
  });

  it('a transaction cancelled by a condition answers which items failed, with their items', async () => {
    const cancelled = new TransactionCanceledException({
      message: 'Transaction cancelled',
      ...metadata,
      CancellationReasons: [
        { Code: 'None' },
        { Code: 'ConditionalCheckFailed', Item: marshall({ pk: 'A', sk: '2', revision: 3 }) },
        { Code: 'ConditionalCheckFailed' },
      ],
    });
    table.useTableClient(scripted(cancelled));
    const outcome = await table.transact([{ Put: { Item: { pk: 'A', sk: '1' } } }]);
    assert.ok(outcome.outcome === 'condition-failed');
    assert.deepEqual(outcome.failed, [1, 2]);
    assert.deepEqual(outcome.reasons, [
      { code: 'None' },
      { code: 'ConditionalCheckFailed', item: { pk: 'A', sk: '2', revision: 3 } },
      { code: 'ConditionalCheckFailed' },
    ]);
    // To a caller that expects no failure, it is the fault it always was: 5.
    assert.equal(codeOf(table.conditionFault(outcome)), Code.CommitFailed);
  });

  it("a single item's failed condition, as a fault, is the exception itself (code 2 later)", async () => {
    const failure = new ConditionalCheckFailedException({ message: 'x', ...metadata });
    table.useTableClient(scripted(failure));
    const outcome = await table.put({
      Item: { pk: 'A', sk: 'B' },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    assert.ok(outcome.outcome === 'condition-failed');
    assert.equal(table.conditionFault(outcome), failure);
  });

  it('a transaction cancelled for a conflict is a fault (5) that a caller may retry', async () => {
    table.useTableClient(
      scripted(
        new TransactionCanceledException({
          message: 'Transaction cancelled',
          ...metadata,
          CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
        }),
      ),
    );
    const error = await rejection(table.transact([{ Put: { Item: { pk: 'A', sk: '1' } } }]));
    assert.equal(codeOf(error), Code.CommitFailed);
    assert.equal(table.isCancelledTransaction(error), true);
    assert.equal(table.isCancelledTransaction(new Error('other')), false);
  });
});

describe('table gateway: faults keep the catalogue mapping', () => {
  it('a missing table is 3, throttling 4, a refused request 111 (logged), anything else untouched', async () => {
    const unknown = new TypeError('garbage answer');
    table.useTableClient(
      scripted(
        new ResourceNotFoundException({ message: 'no table', ...metadata }),
        new ProvisionedThroughputExceededException({ message: 'slow down', ...metadata }),
        Object.assign(new Error('Item size has exceeded the maximum allowed size'), {
          name: 'ValidationException',
        }),
        unknown,
        new ProvisionedThroughputExceededException({ message: 'slow down', ...metadata }),
      ),
    );
    const lines: string[] = [];
    const stop = onLogLine((line) => lines.push(line));
    try {
      assert.equal(codeOf(await rejection(table.get({ pk: 'A', sk: 'B' }))), Code.DatabaseNotConfigured);
      assert.equal(
        codeOf(await rejection(table.query({ KeyConditionExpression: 'pk = :pk' }))),
        Code.DatabaseUnavailable,
      );
      assert.equal(codeOf(await rejection(table.put({ Item: { pk: 'A', sk: 'B' } }))), Code.MethodValidation);
      assert.equal(await rejection(table.update({ Key: { pk: 'A', sk: 'B' } })), unknown);
      assert.equal(codeOf(await rejection(table.transact([{ Delete: { Key: { pk: 'A', sk: 'B' } } }]))), 4);
    } finally {
      stop();
    }
    const refused = lines.filter((line) => line.includes('database refused a request as invalid'));
    assert.equal(refused.length, 1, 'the refused request is logged once');
  });

  it('no TABLE_NAME: code 3 before any request is sent', async () => {
    const client = scripted();
    table.useTableClient(client);
    delete process.env.TABLE_NAME;
    assert.equal(codeOf(await rejection(table.get({ pk: 'A', sk: 'B' }))), Code.DatabaseNotConfigured);
    assert.equal(
      codeOf(await rejection(table.put({ Item: { pk: 'A', sk: 'B' } }))),
      Code.DatabaseNotConfigured,
    );
    assert.equal(codeOf(await rejection(table.transact([]))), Code.DatabaseNotConfigured);
    assert.deepEqual(client.sent, []);
  });
});

describe('a store on an in-memory table (no server)', () => {
  it('the domains store registers a domain once, reads it and deletes it', async () => {
    const memory = memoryTable();
    table.useTableClient(memory);
    assert.equal(await putDomain('Shop.Test.', 'acct-1', new Date('2026-11-22T09:00:00Z')), true);
    assert.equal(await putDomain('shop.test', 'acct-2'), false, 'registered already');
    assert.deepEqual(await getDomain('shop.test'), {
      domain: 'shop.test',
      accountId: 'acct-1',
      createdAt: '2026-11-22T09:00:00.000Z',
      receiving: false,
      origin: 'operator',
      sendingReady: true,
    });
    assert.equal(await deleteDomain('shop.test'), true);
    assert.equal(await deleteDomain('shop.test'), false);
    assert.equal(await getDomain('shop.test'), undefined);
    assert.deepEqual(
      memory.sent.map((request) => request.command),
      ['PutCommand', 'PutCommand', 'GetCommand', 'DeleteCommand', 'DeleteCommand', 'GetCommand'],
    );
  });
});
