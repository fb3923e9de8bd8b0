import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  BatchWriteCommand,
  type BatchWriteCommandOutput,
  DeleteCommand,
  type DeleteCommandInput,
  GetCommand,
  type GetCommandInput,
  type GetCommandOutput,
  PutCommand,
  type PutCommandInput,
  QueryCommand,
  type QueryCommandInput,
  type QueryCommandOutput,
  ScanCommand,
  type ScanCommandInput,
  type ScanCommandOutput,
  TransactWriteCommand,
  type TransactWriteConditionCheck,
  type TransactWriteDelete,
  type TransactWritePut,
  type TransactWriteUpdate,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamo } from '../aws/dynamo.ts';
import { guarded, toServiceFault } from '../aws/faults.ts';
import { tableName } from '../config/storage.ts';
import { Code } from '../errors/catalogue.ts';
import { isServiceError } from '../errors/service-error.ts';

/**
 * The one way to the table (docs/data-model.md): thin calls over the DynamoDB DocumentClient that
 * name the table themselves, map infrastructure faults once (`guarded`: 3, 4, 5, 111, as
 * docs/decisions.md "Infrastructure faults" says), and answer a failed condition as an outcome
 * instead of an exception. Repositories keep their keys, item layouts and expressions: what they
 * pass is what DynamoDB gets, with `TableName` added.
 *
 * A write answers `applied` (with the attributes `ReturnValues` asked for) or `condition-failed`
 * (with the item as the condition found it, when `ReturnValuesOnConditionCheckFailure` asked for
 * it; unmarshalled, as every item here is). A transaction DynamoDB cancels because a condition
 * failed answers `condition-failed` with each item's reason; cancelled for anything else (another
 * transaction on an item) it is a fault, code 5, like every other failure.
 */

/** An item, a key or a page position, in native JavaScript values (the DocumentClient's). */
export type Item = Record<string, unknown>;

type WithoutTable<T> = Omit<T, 'TableName'>;

export interface ConditionFailed {
  outcome: 'condition-failed';
  /** The item as the failed condition found it (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`). */
  item?: Item;
  /** The SDK's exception, for `conditionFault`. */
  cause: unknown;
}

export type WriteOutcome = { outcome: 'applied'; attributes?: Item } | ConditionFailed;

/** One reason of a cancelled transaction, in the order of its items: `None` for an item that was fine. */
export interface CancellationReason {
  code: string;
  item?: Item;
}

export type TransactOutcome =
  | { outcome: 'applied' }
  | {
      outcome: 'condition-failed';
      /** The positions of the items whose condition failed, in order (never empty). */
      failed: number[];
      reasons: CancellationReason[];
      cause: unknown;
    };

/** A transaction's item: what TransactWriteItems takes, without `TableName`. */
export interface TransactItem {
  ConditionCheck?: WithoutTable<TransactWriteConditionCheck>;
  Put?: WithoutTable<TransactWritePut>;
  Delete?: WithoutTable<TransactWriteDelete>;
  Update?: WithoutTable<TransactWriteUpdate>;
}

export interface Page {
  items: Item[];
  /** DynamoDB's LastEvaluatedKey: where the next page starts; absent on the last page. */
  lastKey?: Item;
  /** Items DynamoDB evaluated (its ScannedCount). */
  scannedCount: number;
}

export type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } };

/**
 * What the gateway sends commands through: the DocumentClient, or a fake in a test. `send` gets
 * the lib-dynamodb command (its `input` is the request) and answers its output.
 */
export interface TableClient {
  send(command: object): Promise<unknown>;
}

const nameOf = (error: unknown): string | undefined => (error as { name?: string } | null)?.name;

const plain = (item: unknown): Item | undefined =>
  item === undefined || item === null ? undefined : (unmarshall(item as never) as Item);

/** A single item's failed condition (the exception's `Item` is in DynamoDB JSON: unmarshalled). */
function conditionFailure(error: unknown): ConditionFailed | undefined {
  if (nameOf(error) !== 'ConditionalCheckFailedException') return undefined;
  const item = plain((error as { Item?: unknown }).Item);
  return item === undefined
    ? { outcome: 'condition-failed', cause: error }
    : { outcome: 'condition-failed', item, cause: error };
}

/** A transaction cancelled because a condition failed; undefined for any other error. */
function cancellation(error: unknown): Extract<TransactOutcome, { outcome: 'condition-failed' }> | undefined {
  if (nameOf(error) !== 'TransactionCanceledException') return undefined;
  const raw =
    (error as { CancellationReasons?: Array<{ Code?: string; Item?: unknown }> }).CancellationReasons ?? [];
  const reasons = raw.map((reason): CancellationReason => {
    const item = plain(reason.Item);
    const code = reason.Code ?? 'None';
    return item === undefined ? { code } : { code, item };
  });
  const failed = reasons.flatMap((reason, index) =>
    reason.code === 'ConditionalCheckFailed' ? [index] : [],
  );
  return failed.length === 0 ? undefined : { outcome: 'condition-failed', failed, reasons, cause: error };
}

/**
 * A failed condition as the fault it is to a caller that expects none: what `guarded` makes of the
 * exception (a transaction's: code 5; a single item's: the exception itself, answered as code 2).
 */
export function conditionFault(outcome: { cause: unknown }): unknown {
  return toServiceFault(outcome.cause, 'database');
}

/**
 * A transaction DynamoDB cancelled for a reason other than a condition (another transaction on one
 * of its items), as the gateway throws it (code 5): for the caller that tries again.
 */
export function isCancelledTransaction(error: unknown): boolean {
  return (
    isServiceError(error) &&
    error.code === Code.CommitFailed &&
    nameOf(error.cause) === 'TransactionCanceledException'
  );
}

let client: () => TableClient = dynamo;

/**
 * Sends the gateway's requests through `fake` (a test's), or through the DocumentClient again
 * (none given). The table is always the one of `TABLE_NAME`.
 */
export function useTableClient(fake?: TableClient): void {
  client = fake === undefined ? dynamo : () => fake;
}

/** One request, its faults mapped. */
const send = <T>(command: object): Promise<T> =>
  guarded('database', () => client().send(command) as Promise<T>);

/** A conditional write: applied (with the attributes asked for), or the failed condition. */
const write = (command: object): Promise<WriteOutcome> =>
  guarded('database', async () => {
    try {
      const output = (await client().send(command)) as { Attributes?: Item };
      return output.Attributes === undefined
        ? { outcome: 'applied' as const }
        : { outcome: 'applied' as const, attributes: output.Attributes };
    } catch (error) {
      const failed = conditionFailure(error);
      if (failed === undefined) throw error;
      return failed;
    }
  });

const pageOf = (output: QueryCommandOutput | ScanCommandOutput): Page => {
  const page: Page = { items: output.Items ?? [], scannedCount: output.ScannedCount ?? 0 };
  if (output.LastEvaluatedKey !== undefined) page.lastKey = output.LastEvaluatedKey;
  return page;
};

// Each operation is a function of its own (used as `table.get`, `table.put` … with
// `import * as table`), so a function's bundle carries only the commands its stores send.

export async function get(
  key: Item,
  options: WithoutTable<Omit<GetCommandInput, 'Key'>> = {},
): Promise<Item | undefined> {
  const output = await send<GetCommandOutput>(
    new GetCommand({ ...options, TableName: tableName(), Key: key }),
  );
  return output.Item;
}

export async function put(input: WithoutTable<PutCommandInput>): Promise<WriteOutcome> {
  return write(new PutCommand({ ...input, TableName: tableName() }));
}

export async function update(input: WithoutTable<UpdateCommandInput>): Promise<WriteOutcome> {
  return write(new UpdateCommand({ ...input, TableName: tableName() }));
}

async function deleteItem(input: WithoutTable<DeleteCommandInput>): Promise<WriteOutcome> {
  return write(new DeleteCommand({ ...input, TableName: tableName() }));
}

export { deleteItem as delete };

/** TransactWriteItems over the table: applied, or which conditions failed. */
export function transact(items: readonly TransactItem[]): Promise<TransactOutcome> {
  return guarded('database', async (): Promise<TransactOutcome> => {
    const name = tableName();
    const TransactItems = items.map((item) =>
      Object.fromEntries(
        Object.entries(item).map(([kind, operation]) => [kind, { ...operation, TableName: name }]),
      ),
    );
    try {
      await client().send(new TransactWriteCommand({ TransactItems }));
      return { outcome: 'applied' };
    } catch (error) {
      const cancelled = cancellation(error);
      if (cancelled === undefined) throw error;
      return cancelled;
    }
  });
}

/** One page of a Query. */
export async function query(input: WithoutTable<QueryCommandInput>): Promise<Page> {
  return pageOf(await send<QueryCommandOutput>(new QueryCommand({ ...input, TableName: tableName() })));
}

/** Every page of a Query, one request after another, the items in order. */
export async function queryAll(
  input: WithoutTable<Omit<QueryCommandInput, 'ExclusiveStartKey'>>,
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await query({ ...input, ExclusiveStartKey: start });
    items.push(...page.items);
    start = page.lastKey;
  } while (start !== undefined);
  return items;
}

/** One page of a Scan (operator tooling; never on a request path). */
export async function scan(input: WithoutTable<ScanCommandInput>): Promise<Page> {
  return pageOf(await send<ScanCommandOutput>(new ScanCommand({ ...input, TableName: tableName() })));
}

/** One BatchGetItem (at most 100 keys): what it found, and the keys it left unprocessed. */
export async function batchGet(
  keys: readonly Item[],
  options: { consistent?: boolean } = {},
): Promise<{ items: Item[]; unprocessed: Item[] }> {
  const name = tableName();
  const output = await send<BatchGetCommandOutput>(
    new BatchGetCommand({
      RequestItems: {
        [name]: {
          Keys: [...keys],
          ...(options.consistent === undefined ? {} : { ConsistentRead: options.consistent }),
        },
      },
    }),
  );
  return {
    items: output.Responses?.[name] ?? [],
    unprocessed: output.UnprocessedKeys?.[name]?.Keys ?? [],
  };
}

/** One BatchWriteItem (at most 25 requests): the requests it left unprocessed. */
export async function batchWrite(
  requests: readonly WriteRequest[],
): Promise<{ unprocessed: WriteRequest[] }> {
  const name = tableName();
  const output = await send<BatchWriteCommandOutput>(
    new BatchWriteCommand({ RequestItems: { [name]: [...requests] as never } }),
  );
  return { unprocessed: (output.UnprocessedItems?.[name] ?? []) as WriteRequest[] };
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
