import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { firstWatchAt } from '../shared/messages/config.ts';
import {
  isInFlight,
  laneOf,
  messageIndexAttributes,
  searchEntriesOf,
} from '../shared/messages/store/message-index.ts';
import { readState } from '../shared/messages/store/message-state.ts';
import { mapLimit } from '../shared/platform/concurrency/map-limit.ts';
import { chunkSize } from '../shared/platform/paging/merge.ts';
import { keys, shardCount } from '../shared/platform/table/keys.ts';
import { addCounts, hoursOfRow, type StatCounter, zeroCounts } from '../shared/stats/model/counters.ts';
import { seedingConcurrency, seedingDynamo, withRetries } from './seeding.ts';

/** HTTP calls to the service, and the raw SDK calls its endpoints must make, for comparison. */
export interface Caller {
  url: string;
  /**
   * Several tokens of one account, used in turn: the service limits each Authorization header to
   * 50 requests/s (burst 100), which matters against a running host (BENCH_URL).
   */
  tokens: string[];
}

let turn = 0;
export function tokenOf(who: Caller): string {
  turn = (turn + 1) % 1_000_000;
  return who.tokens[turn % who.tokens.length] as string;
}

function isClosedConnection(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } }).cause?.code;
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET';
}

export async function call(
  who: Caller,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const send = () =>
    fetch(`${who.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${tokenOf(who)}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  // The benchmark's client and the local host share one process, and one event loop: after a busy
  // stretch the host may close an idle kept-alive connection just as the client reuses it. That
  // request never reached a handler, so it is sent once more; a host that is down still fails.
  const response = await send().catch((error: unknown) => {
    if (!isClosedConnection(error)) throw error;
    return send();
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed };
}

export function addBody(sender: string, mode: 'immediate' | 'manual-wait' = 'manual-wait') {
  return {
    message_sender: sender,
    to: ['Ada <ada@recipient.test>'],
    subject: 'Benchmark',
    content: { kind: 'text_only', text: 'Hello from the benchmark.' },
    scheduling: { mode },
  };
}

export async function addMessage(
  who: Caller,
  sender: string,
  mode: 'immediate' | 'manual-wait' = 'manual-wait',
): Promise<string> {
  const response = await call(who, 'POST', '/message/add-1.0', addBody(sender, mode));
  if (response.status !== 200) throw new Error(`add failed: ${JSON.stringify(response.body)}`);
  return response.body.data.message_uuid as string;
}

/** Plain SDK clients, created here (not the project's factories): the "raw" side. */
export const rawDynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true },
});

export function table(): string {
  return process.env.TABLE_NAME as string;
}

export async function storedItem(uuid: string): Promise<Record<string, unknown>> {
  const result = await rawDynamo.send(new GetCommand({ TableName: table(), Key: keys.message(uuid) }));
  if (result.Item === undefined) throw new Error(`message ${uuid} not stored`);
  return result.Item;
}

/** A copy of a stored message under a new uuid, account, status and creation time. */
export function cloneItem(
  template: Record<string, unknown>,
  account: string,
  status: string,
  createdAt: Date,
): Record<string, unknown> {
  const uuid = randomUUID();
  const created = createdAt.toISOString();
  const { gsi2pk: _status, gsi3pk: _work, gsi3sk: _workSort, due_at: _due, ...rest } = template;
  return {
    ...rest,
    ...keys.message(uuid),
    message_uuid: uuid,
    account_id: account,
    status,
    created_at: created,
    updated_at: created,
    ...messageIndexAttributes({
      message_uuid: uuid,
      account_id: account,
      created_at: created,
      status,
      ...(isInFlight(status) ? { watch_at: firstWatchAt(createdAt.getTime()) } : {}),
    }),
  };
}

/**
 * Seeding: BatchWriteItem, 25 items a request, at most `parallel` requests at a time (bench/seeding.ts
 * bounds it), through the seeding client; unprocessed items and failed requests are retried.
 */
export async function batchWrite(
  items: Array<Record<string, unknown>>,
  parallel = seedingConcurrency,
): Promise<void> {
  const batches: Array<Array<Record<string, unknown>>> = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  await mapLimit(batches, Math.min(parallel, seedingConcurrency), async (batch) => {
    let requests = batch.map((item) => ({ PutRequest: { Item: item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      const pending = requests;
      const result = await withRetries(
        () => seedingDynamo.send(new BatchWriteCommand({ RequestItems: { [table()]: pending } })),
        'seeding batch write',
      );
      requests = (result.UnprocessedItems?.[table()] ?? []) as typeof requests;
      if (requests.length > 0) await new Promise((done) => setTimeout(done, 20 * (attempt + 1)));
    }
  });
}

export async function statusesOf(uuids: readonly string[]): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  for (let i = 0; i < uuids.length; i += 100) {
    const result = await rawDynamo.send(
      new BatchGetCommand({
        RequestItems: {
          [table()]: {
            Keys: uuids.slice(i, i + 100).map((uuid) => keys.message(uuid)),
            ProjectionExpression: 'message_uuid, #s',
            ExpressionAttributeNames: { '#s': 'status' },
          },
        },
      }),
    );
    for (const item of result.Responses?.[table()] ?? []) {
      statuses.set(String(item.message_uuid), String(item.status));
    }
  }
  return statuses;
}

/** The search entries of a stored message item, whose recipients are in its compressed state (`st`). */
const storedSearchEntries = (item: Record<string, unknown>) =>
  searchEntriesOf({ ...item, recipients: readState(item).state.recipients } as never);

// The raw SDK calls each endpoint must make at least (the service adds auth, validation, mapping).
export const raw = {
  /**
   * add: the sending domain's owner, the content item (small body, at its first recipient's search
   * entry) and the search entries of its other recipients (at the same time), then the conditional
   * put of the message.
   */
  async add(domain: string, item: Record<string, unknown>): Promise<void> {
    await rawDynamo.send(new GetCommand({ TableName: table(), Key: keys.domain(domain) }));
    await Promise.all(
      storedSearchEntries(item).map((entry, index) =>
        rawDynamo.send(
          new PutCommand({
            TableName: table(),
            Item: index === 0 ? { ...entry, text: 'Hello from the benchmark.' } : entry,
          }),
        ),
      ),
    );
    await rawDynamo.send(
      new PutCommand({ TableName: table(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  },
  /** query by uuid: one consistent GetItem. */
  async queryUuid(uuid: string): Promise<void> {
    await rawDynamo.send(
      new GetCommand({ TableName: table(), Key: keys.message(uuid), ConsistentRead: true }),
    );
  },
  /** query with filters: one Query per shard of the status index, then the page's items. */
  async queryFilters(account: string, status: string, from: string, to: string, limit = 50) {
    const pages = await Promise.all(
      Array.from({ length: shardCount.account }, (_, shard) =>
        rawDynamo.send(
          new QueryCommand({
            TableName: table(),
            IndexName: 'gsi2',
            KeyConditionExpression: 'gsi2pk = :pk AND gsi1sk BETWEEN :lower AND :upper',
            ExpressionAttributeValues: {
              ':pk': keys.messagesOfAccountByLane(account, laneOf(status), shard),
              ':lower': from,
              ':upper': `${to}#~`,
            },
            ScanIndexForward: false,
            Limit: chunkSize(limit, shardCount.account),
          }),
        ),
      ),
    );
    const keysFound = pages
      .flatMap((page) => page.Items ?? [])
      .sort((a, b) => (String(a.gsi1sk) < String(b.gsi1sk) ? 1 : -1))
      .slice(0, limit)
      .map((item) => ({ pk: item.pk, sk: item.sk }));
    if (keysFound.length > 0)
      await rawDynamo.send(
        new BatchGetCommand({ RequestItems: { [table()]: { Keys: keysFound, ConsistentRead: true } } }),
      );
    return pages.reduce((sum, page) => sum + (page.ScannedCount ?? 0), 0);
  },
  /** delete: read the message, the conditional DeleteItem, then its search entries (the content item among them). */
  async delete(uuid: string, account: string): Promise<void> {
    const read = await rawDynamo.send(
      new BatchGetCommand({ RequestItems: { [table()]: { Keys: [keys.message(uuid)] } } }),
    );
    await rawDynamo.send(
      new DeleteCommand({
        TableName: table(),
        Key: keys.message(uuid),
        ConditionExpression: 'attribute_exists(pk) AND account_id = :a',
        ExpressionAttributeValues: { ':a': account },
      }),
    );
    const item = read.Responses?.[table()]?.[0];
    await Promise.all(
      (item === undefined ? [] : storedSearchEntries(item)).map((Key) =>
        rawDynamo.send(new DeleteCommand({ TableName: table(), Key })),
      ),
    );
  },
  /** DKIM status: the domain's owner, then its keys. */
  async dkimStatus(domain: string): Promise<void> {
    await rawDynamo.send(new GetCommand({ TableName: table(), Key: keys.domain(domain) }));
    await rawDynamo.send(
      new QueryCommand({
        TableName: table(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :dkim)',
        ExpressionAttributeValues: { ':pk': keys.domain(domain).pk, ':dkim': 'DKIM#' },
      }),
    );
  },
  put: (item: Record<string, unknown>) => rawDynamo.send(new PutCommand({ TableName: table(), Item: item })),
};

/**
 * What the statistics hold for an account on the given days (its own rows), read with the
 * benchmark's own client so the reading is not metered as the service's.
 */
export async function countedFor(
  account: string,
  days: readonly string[],
): Promise<Record<StatCounter, number>> {
  const totals = zeroCounts();
  for (const day of days) {
    const result = await rawDynamo.send(
      new QueryCommand({
        TableName: table(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :day)',
        ExpressionAttributeValues: { ':pk': keys.statsOfAccount(account), ':day': `all#${day}#` },
      }),
    );
    for (const row of result.Items ?? [])
      for (const counts of hoursOfRow(row).values()) addCounts(totals, counts);
  }
  return totals;
}
