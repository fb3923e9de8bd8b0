import { SendMessageCommand } from '@aws-sdk/client-sqs';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/dynamo.ts';
import { guarded } from '../aws/faults.ts';
import { sqs } from '../aws/sqs.ts';
import { queueUrl, tableName } from '../config/storage.ts';
import type { ContentBodies, HistoryEntry, MessageItem } from '../domain/messages/message.ts';
import { type MessageStatus, protectedStatuses } from '../domain/messages/statuses.ts';
import { batchGetItems } from './batch-get.ts';
import { indexChangeFor, keys, type MessageIndexAttributes, messageIndexAttributes } from './keys.ts';

/**
 * Storage of messages (docs/data-model.md): the message item and its index attributes in
 * DynamoDB, bodies and attachments in S3, the send queue, and idempotency records. Every state
 * change is a conditional write, so concurrent requests and the sender never overwrite each other.
 */

type RawItem = Record<string, { S?: string; N?: string } | undefined>;

interface ConditionalFailure {
  name?: string;
  Item?: RawItem;
  CancellationReasons?: Array<{ Code?: string; Item?: RawItem }>;
}

const isConditionalFailure = (error: unknown): error is ConditionalFailure =>
  (error as { name?: string })?.name === 'ConditionalCheckFailedException';
const isCancelled = (error: unknown): error is ConditionalFailure =>
  (error as { name?: string })?.name === 'TransactionCanceledException';

function indexAttributes(item: MessageItem, dueAt: string | undefined): MessageIndexAttributes {
  return messageIndexAttributes({
    message_uuid: item.message_uuid,
    account_id: item.account_id,
    created_at: item.created_at,
    status: item.status,
    ...(item.scheduling.send_at === undefined ? {} : { send_at: item.scheduling.send_at }),
    ...(dueAt === undefined ? {} : { due_at: dueAt }),
  });
}

/**
 * Empty lists and maps are not stored (readers default them): every byte of the message item is
 * paid again at each of its writes, in 1 KB write units (docs/data-model.md, "Write units").
 */
const optionalWhenEmpty = ['cc', 'bcc', 'reply_to', 'attachments', 'headers'] as const;
function compact(item: MessageItem): Partial<MessageItem> {
  const stored: Partial<MessageItem> = { ...item };
  for (const name of optionalWhenEmpty) {
    const value = stored[name] as unknown;
    if (Array.isArray(value) ? value.length === 0 : Object.keys((value ?? {}) as object).length === 0)
      delete stored[name];
  }
  // Defaults, restored on read: bodies in the content item, immediate sending, no attempt yet.
  if (stored.content?.store === 'item') delete stored.content;
  if (stored.scheduling?.mode === 'immediate' && stored.scheduling.send_at === undefined)
    delete stored.scheduling;
  if (stored.attempts === 0) delete stored.attempts;
  return stored;
}

const stripKeys = (item: Record<string, unknown>): MessageItem => {
  const { pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi3pk, gsi3sk, ...rest } = item;
  return {
    content: { store: 'item' },
    scheduling: { mode: 'immediate' },
    attempts: 0,
    ...rest,
  } as unknown as MessageItem;
};

// ---------------------------------------------------------------------------------------------
// Idempotency records

export interface IdempotencyClaim {
  key: string;
  bodyHash: string;
  /** Epoch seconds: the TTL attribute `expires_at`. */
  expiresAt: number;
  now: Date;
}

export interface StoredResponse {
  bodyHash: string;
  messageUuid: string;
  status: string;
}

function idempotencyPut(
  account: string,
  claim: IdempotencyClaim,
  response: { messageUuid: string; status: string },
) {
  return {
    TableName: tableName(),
    Item: {
      ...keys.idempotency(account, claim.key),
      account_id: account,
      body_hash: claim.bodyHash,
      response_message_uuid: response.messageUuid,
      response_status: response.status,
      created_at: claim.now.toISOString(),
      expires_at: claim.expiresAt,
    },
    // A record past its lifetime that TTL has not removed yet counts as absent.
    ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now',
    ExpressionAttributeValues: { ':now': Math.floor(claim.now.getTime() / 1000) },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

function storedResponseOf(item: RawItem | undefined, account: string): StoredResponse | undefined {
  // A record of another account is never replayed (the key includes the account; this is the
  // second lock of the same door).
  if (item?.account_id?.S !== account) return undefined;
  const bodyHash = item?.body_hash?.S;
  const messageUuid = item?.response_message_uuid?.S;
  const status = item?.response_status?.S;
  if (bodyHash === undefined || messageUuid === undefined || status === undefined) return undefined;
  return { bodyHash, messageUuid, status };
}

/** The live idempotency record of a key (used by dry runs, which must not write). */
export async function getIdempotencyRecord(
  account: string,
  key: string,
  now: Date,
): Promise<StoredResponse | undefined> {
  const result = await guarded('database', () =>
    dynamo().send(
      new GetCommand({ TableName: tableName(), Key: keys.idempotency(account, key), ConsistentRead: true }),
    ),
  );
  const item = result.Item;
  if (item === undefined || Number(item.expires_at) < Math.floor(now.getTime() / 1000)) return undefined;
  if (item.account_id !== account) return undefined;
  return {
    bodyHash: String(item.body_hash),
    messageUuid: String(item.response_message_uuid),
    status: String(item.response_status),
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs a write together with the idempotency record in one transaction. When the key is already
 * taken the write is not made and the stored response is returned instead; when the write's own
 * condition fails, that failure (with the item as it was) is returned.
 */
async function withIdempotency(
  account: string,
  claim: IdempotencyClaim,
  response: { messageUuid: string; status: string },
  write: Record<string, unknown> & { kind: 'Put' | 'Update' },
): Promise<
  | { outcome: 'written' }
  | { outcome: 'replay'; stored: StoredResponse }
  | { outcome: 'failed'; item?: RawItem }
> {
  const { kind, ...operation } = write;
  for (let attempt = 0; ; attempt++) {
    try {
      await dynamo().send(
        new TransactWriteCommand({
          TransactItems: [{ Put: idempotencyPut(account, claim, response) }, { [kind]: operation } as never],
        }),
      );
      return { outcome: 'written' };
    } catch (error) {
      if (!isCancelled(error)) throw error;
      const [claimReason, writeReason] = error.CancellationReasons ?? [];
      if (claimReason?.Code === 'ConditionalCheckFailed') {
        const stored = storedResponseOf(claimReason.Item, account);
        if (stored !== undefined) return { outcome: 'replay', stored };
      }
      if (writeReason?.Code === 'ConditionalCheckFailed') {
        return writeReason.Item === undefined
          ? { outcome: 'failed' }
          : { outcome: 'failed', item: writeReason.Item };
      }
      // A concurrent transaction on the same key: try again, the loser then sees the winner's record.
      if (attempt >= 6) throw error;
      await pause(20 + Math.floor(Math.random() * 40) * (attempt + 1));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Messages

export type CreateResult = { created: true } | { created: false; replay: StoredResponse };

/** Writes a new message (and its idempotency record, when the request had a key). */
export async function createMessage(
  item: MessageItem,
  dueAt: string | undefined,
  claim?: IdempotencyClaim,
): Promise<CreateResult> {
  const put = {
    TableName: tableName(),
    Item: {
      ...keys.message(item.message_uuid),
      ...indexAttributes(item, dueAt),
      ...compact(item),
      ...(dueAt === undefined ? {} : { due_at: dueAt }),
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
  if (claim === undefined) {
    await guarded('database', () => dynamo().send(new PutCommand(put)));
    return { created: true };
  }
  const result = await guarded('database', () =>
    withIdempotency(
      item.account_id,
      claim,
      { messageUuid: item.message_uuid, status: item.status },
      {
        kind: 'Put',
        ...put,
      },
    ),
  );
  if (result.outcome === 'replay') return { created: false, replay: result.stored };
  if (result.outcome === 'failed') throw new Error('message uuid collision');
  return { created: true };
}

/**
 * A small message's bodies, beside its item (docs/data-model.md, "Bodies"): written once, before
 * the message item, so a message never exists without them. It carries no `message_uuid` or
 * `account_id`, and no index attribute: nothing lists it but its message.
 */
export async function putContentItem(uuid: string, bodies: ContentBodies): Promise<void> {
  await guarded('database', () =>
    dynamo().send(
      new PutCommand({ TableName: tableName(), Item: { ...keys.messageContent(uuid), ...bodies } }),
    ),
  );
}

export async function deleteContentItems(uuids: readonly string[]): Promise<void> {
  for (const uuid of uuids) {
    await guarded('database', () =>
      dynamo().send(new DeleteCommand({ TableName: tableName(), Key: keys.messageContent(uuid) })),
    );
  }
}

/** One message, read consistently. */
export async function getMessage(uuid: string): Promise<MessageItem | undefined> {
  const result = await guarded('database', () =>
    dynamo().send(new GetCommand({ TableName: tableName(), Key: keys.message(uuid), ConsistentRead: true })),
  );
  return result.Item === undefined ? undefined : stripKeys(result.Item);
}

/** Several messages by uuid (dry-run deletes): at most 100 per call, as BatchGetItem allows. */
export async function getMessages(uuids: readonly string[]): Promise<Map<string, MessageItem>> {
  const found = new Map<string, MessageItem>();
  for (const item of await batchGetItems(uuids.map((uuid) => keys.message(uuid))))
    found.set(String(item.message_uuid), stripKeys(item));
  return found;
}

export type TransitionResult =
  | { outcome: 'changed' }
  | { outcome: 'replay'; stored: StoredResponse }
  | { outcome: 'not-found' }
  | { outcome: 'wrong-state'; status: string };

export interface Transition {
  uuid: string;
  account: string;
  from: readonly MessageStatus[];
  to: MessageStatus;
  entry: HistoryEntry;
  /** New due time (UTC ISO) for the due index, or null to leave the index. */
  dueAt: string | null;
}

/**
 * Moves a message of `account` from one of `from` to `to` with one conditional update: the status,
 * its index key, `updated_at`, the due index and the appended history entry change together.
 */
export async function transitionMessage(
  transition: Transition,
  claim?: IdempotencyClaim,
): Promise<TransitionResult> {
  const { uuid, account, from, to, entry, dueAt } = transition;
  const values: Record<string, unknown> = {
    ':account': account,
    ':to': to,
    ':now': entry.at,
    ':entry': [entry],
  };
  from.forEach((status, index) => {
    values[`:from${index}`] = status;
  });
  // The index keys follow the new status: the owner and creation time come from the item itself,
  // which the condition pins to `account`; only the status (and due time) are new.
  const current = await getMessage(uuid);
  const assignments = ['#status = :to', 'updated_at = :now', 'history = list_append(history, :entry)'];
  const removals: string[] = [];
  if (current !== undefined && current.account_id === account) {
    const change = indexChangeFor(
      {
        message_uuid: uuid,
        account_id: account,
        created_at: current.created_at,
        status: to,
        ...(current.scheduling?.send_at === undefined ? {} : { send_at: current.scheduling.send_at }),
      },
      from,
    );
    for (const [name, value] of Object.entries(change.set)) {
      assignments.push(`${name} = :${name}`);
      values[`:${name}`] = value;
    }
    removals.push(...change.remove);
    values[':created'] = current.created_at;
  }
  if (dueAt === null) removals.push('due_at');
  else {
    assignments.push('due_at = :dueAt');
    values[':dueAt'] = dueAt;
  }
  const expression = `SET ${assignments.join(', ')}${removals.length > 0 ? ` REMOVE ${removals.join(', ')}` : ''}`;
  const createdCondition = values[':created'] === undefined ? '' : ' AND created_at = :created';
  const update = {
    TableName: tableName(),
    Key: keys.message(uuid),
    UpdateExpression: expression,
    ConditionExpression: `attribute_exists(pk) AND account_id = :account${createdCondition} AND #status IN (${from.map((_, i) => `:from${i}`).join(', ')})`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: values,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
  const classify = (item: RawItem | undefined): TransitionResult => {
    if (item === undefined || item.account_id?.S !== account) return { outcome: 'not-found' };
    return { outcome: 'wrong-state', status: item.status?.S ?? 'unknown' };
  };
  if (claim !== undefined) {
    const result = await guarded('database', () =>
      withIdempotency(account, claim, { messageUuid: uuid, status: to }, { kind: 'Update', ...update }),
    );
    if (result.outcome === 'replay') return result;
    if (result.outcome === 'failed') return classify(result.item);
    return { outcome: 'changed' };
  }
  try {
    await guarded('database', () => dynamo().send(new UpdateCommand(update)));
    return { outcome: 'changed' };
  } catch (error) {
    if (isConditionalFailure(error)) return classify(error.Item);
    throw error;
  }
}

export interface KeyPage {
  /** Sort keys `<created_at>#<uuid>` in index order (newest first), without any partition prefix. */
  keys: string[];
  /** DynamoDB returned a LastEvaluatedKey: the stream may hold more. */
  more: boolean;
  /** Index entries DynamoDB evaluated (ScannedCount): no filter expression is used, so = keys.length. */
  scannedCount: number;
}

export interface IndexStream {
  index: 'gsi2' | 'gsi3';
  partition: string;
  /** What precedes `<created_at>#<uuid>` in the sort key (the account, on the in-flight index). */
  prefix: string;
}

export interface KeyQuery {
  /** Inclusive bounds on the creation time, UTC ISO. */
  createdFrom?: string;
  createdTo?: string;
  /** Continue after this sort key (`<created_at>#<uuid>`). */
  after?: string;
  limit: number;
}

const sortKeyAttribute = { gsi2: 'gsi1sk', gsi3: 'gsi3sk' } as const;

/**
 * One page of an index partition's sort keys, newest first, by a key condition (never a Scan).
 * The indexes project keys only; the caller reads the items it keeps with `getMessages`.
 */
export async function queryIndexKeys(stream: IndexStream, query: KeyQuery): Promise<KeyPage> {
  const sortName = sortKeyAttribute[stream.index];
  const lower = `${stream.prefix}${query.createdFrom ?? '0'}`;
  const upper = `${stream.prefix}${query.createdTo === undefined ? '~' : `${query.createdTo}#~`}`;
  let startKey: Record<string, string> | undefined;
  if (query.after !== undefined) {
    const uuid = query.after.slice(query.after.indexOf('#') + 1);
    startKey = {
      ...keys.message(uuid),
      [`${stream.index}pk`]: stream.partition,
      [sortName]: `${stream.prefix}${query.after}`,
    };
  }
  const result = await guarded('database', () =>
    dynamo().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: stream.index,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
        ExpressionAttributeNames: { '#pk': `${stream.index}pk`, '#sk': sortName },
        ExpressionAttributeValues: { ':pk': stream.partition, ':lower': lower, ':upper': upper },
        ScanIndexForward: false,
        Limit: query.limit,
        ExclusiveStartKey: startKey,
      }),
    ),
  );
  return {
    keys: (result.Items ?? []).map((item) => String(item[sortName]).slice(stream.prefix.length)),
    more: result.LastEvaluatedKey !== undefined,
    scannedCount: result.ScannedCount ?? 0,
  };
}

export type DeleteOutcome =
  | { outcome: 'deleted'; item: MessageItem }
  | { outcome: 'not_found' | 'unauthorized' | 'protected' };

const protectedValues = Object.fromEntries(protectedStatuses.map((status, index) => [`:p${index}`, status]));

/**
 * Deletes a message only if it exists, belongs to `account` and is not in a protected status.
 * The condition sits on the DeleteItem itself, so a message that a sender claims (→ processing)
 * at the same instant is never deleted.
 */
export async function deleteMessage(uuid: string, account: string): Promise<DeleteOutcome> {
  try {
    const result = await guarded('database', () =>
      dynamo().send(
        new DeleteCommand({
          TableName: tableName(),
          Key: keys.message(uuid),
          ConditionExpression: `attribute_exists(pk) AND account_id = :account AND NOT (#status IN (${Object.keys(protectedValues).join(', ')}))`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':account': account, ...protectedValues },
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    return { outcome: 'deleted', item: stripKeys(result.Attributes ?? {}) };
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    if (error.Item === undefined) return { outcome: 'not_found' };
    if (error.Item.account_id?.S !== account) return { outcome: 'unauthorized' };
    return { outcome: 'protected' };
  }
}

// ---------------------------------------------------------------------------------------------
// Objects and the send queue

export interface StoredObject {
  key: string;
  body: Uint8Array | string;
  contentType: string;
}

/** A message's S3 object (./message-objects.ts), when its bodies are too large for the content item or it has attachments. */
export { deleteObjects, putObjects } from './message-objects.ts';

/** The sender's queue message: `{"message_uuid": "<uuid>"}`. */
export async function enqueueForSending(uuid: string, delaySeconds = 0): Promise<void> {
  await guarded('queue', () =>
    sqs().send(
      new SendMessageCommand({
        QueueUrl: queueUrl(),
        MessageBody: JSON.stringify({ message_uuid: uuid }),
        DelaySeconds: delaySeconds,
      }),
    ),
  );
}
