import { mapLimit } from '../../platform/concurrency/map-limit.ts';
import { batchGetItems } from '../../platform/table/batch-get.ts';
import { writeInBatches } from '../../platform/table/batch-write.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import { firstWatchAt } from '../config.ts';
import type { ContentBodies, HistoryEntry, MessageItem } from '../model/message.ts';
import { type MessageStatus, protectedStatuses } from '../model/statuses.ts';
import {
  indexChangeFor,
  isInFlight,
  type MessageIndexAttributes,
  messageIndexAttributes,
} from './message-index.ts';
import {
  appendHistory,
  encodeState,
  plainStateAttributes,
  readState,
  sameState,
  stateAttribute,
  stateGuard,
} from './message-state.ts';

/**
 * Storage of messages (docs/data-model.md): the message item and its index attributes in
 * DynamoDB, bodies and attachments in S3, the send queue, and idempotency records. Every state
 * change is a conditional write, so concurrent requests and the sender never overwrite each other.
 */

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * A new message's index attributes. An in-flight one is watched from the time of its write (not its
 * creation, which a batch completed by a retry keeps from the first request), so the dispatcher's
 * window never starts past it (docs/data-model.md, "Watch entries").
 */
function indexAttributes(item: MessageItem, dueAt: string | undefined): MessageIndexAttributes {
  return messageIndexAttributes({
    ...(isInFlight(item.status) ? { watch_at: firstWatchAt(Date.now()) } : {}),
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
const optionalWhenEmpty = ['cc', 'bcc', 'reply_to', 'attachments', 'headers', 'tags', 'metadata'] as const;
function compact(item: MessageItem): Record<string, unknown> {
  // Recipients and history are the compressed state (message-state.ts).
  const { recipients, history, ...rest } = item;
  const stored: Partial<MessageItem> & Record<string, unknown> = {
    ...rest,
    [stateAttribute]: encodeState({ recipients, history }),
  };
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
  const { pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi3pk, gsi3sk, [stateAttribute]: _state, ...rest } = item;
  const { state } = readState(item);
  return {
    content: { store: 'item' },
    scheduling: { mode: 'immediate' },
    attempts: 0,
    ...rest,
    recipients: state.recipients,
    history: state.history,
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

function storedResponseOf(item: table.Item | undefined, account: string): StoredResponse | undefined {
  // A record of another account is never replayed (the key includes the account; this is the
  // second lock of the same door).
  if (text(item?.account_id) !== account) return undefined;
  const bodyHash = text(item?.body_hash);
  if (bodyHash === undefined) return undefined;
  // A batch's record (./batch-records.ts) under the same key holds no single response: its body
  // hash never matches an add's body, so the add answers 111 (the key was used for another request).
  return {
    bodyHash,
    messageUuid: text(item?.response_message_uuid) ?? '',
    status: text(item?.response_status) ?? '',
  };
}

/** The live idempotency record of a key (used by dry runs, which must not write). */
export async function getIdempotencyRecord(
  account: string,
  key: string,
  now: Date,
): Promise<StoredResponse | undefined> {
  const item = await table.get(keys.idempotency(account, key), { ConsistentRead: true });
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
  write: Pick<table.TransactItem, 'Put' | 'Update'>,
): Promise<
  | { outcome: 'written' }
  | { outcome: 'replay'; stored: StoredResponse }
  | { outcome: 'failed'; item?: table.Item }
> {
  for (let attempt = 0; ; attempt++) {
    let failure: unknown;
    try {
      const result = await table.transact([{ Put: idempotencyPut(account, claim, response) }, write]);
      if (result.outcome === 'applied') return { outcome: 'written' };
      const [claimed, written] = result.reasons;
      if (result.failed.includes(0)) {
        const stored = storedResponseOf(claimed?.item, account);
        if (stored !== undefined) return { outcome: 'replay', stored };
      }
      if (result.failed.includes(1)) {
        return written?.item === undefined
          ? { outcome: 'failed' }
          : { outcome: 'failed', item: written.item };
      }
      failure = table.conditionFault(result);
    } catch (error) {
      if (!table.isCancelledTransaction(error)) throw error;
      failure = error;
    }
    // A concurrent transaction on the same key: try again, the loser then sees the winner's record.
    if (attempt >= 6) throw failure;
    await pause(20 + Math.floor(Math.random() * 40) * (attempt + 1));
  }
}

// ---------------------------------------------------------------------------------------------
// Messages

export type CreateResult = { created: true } | { created: false; replay: StoredResponse };

/** A new message item as stored: keys, index attributes, the compacted attributes, its due time. */
function storedMessage(item: MessageItem, dueAt: string | undefined): Record<string, unknown> {
  return {
    ...keys.message(item.message_uuid),
    ...indexAttributes(item, dueAt),
    ...compact(item),
    ...(dueAt === undefined ? {} : { due_at: dueAt }),
  };
}

/** Writes a new message (and its idempotency record, when the request had a key). */
export async function createMessage(
  item: MessageItem,
  dueAt: string | undefined,
  claim?: IdempotencyClaim,
): Promise<CreateResult> {
  const put = { Item: storedMessage(item, dueAt), ConditionExpression: 'attribute_not_exists(pk)' };
  if (claim === undefined) {
    const written = await table.put(put);
    // A uuid is new (random): an existing item is not foreseen (code 2).
    if (written.outcome === 'condition-failed') throw table.conditionFault(written);
    return { created: true };
  }
  const result = await withIdempotency(
    item.account_id,
    claim,
    { messageUuid: item.message_uuid, status: item.status },
    { Put: put },
  );
  if (result.outcome === 'replay') return { created: false, replay: result.stored };
  if (result.outcome === 'failed') throw new Error('message uuid collision');
  return { created: true };
}

/**
 * The messages of a batch, with BatchWriteItem (25 a request, several requests at a time) instead
 * of one conditional put each: their uuids are new (random), so no condition is needed, and the
 * batch's idempotency record, written before them, is what makes a retry find them again.
 */
export async function putNewMessages(
  messages: ReadonlyArray<{ item: MessageItem; dueAt: string | undefined }>,
): Promise<void> {
  await writeInBatches(
    messages.map(({ item, dueAt }) => ({ PutRequest: { Item: storedMessage(item, dueAt) } })),
  );
}

/**
 * Writes one message with a condition (`attribute_not_exists(pk)`): the path that completes a batch
 * another request began, where the message may already exist and may have moved on since.
 * True when it was written, false when it already existed.
 */
export async function putMessageIfAbsent(item: MessageItem, dueAt: string | undefined): Promise<boolean> {
  const result = await table.put({
    Item: storedMessage(item, dueAt),
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  return result.outcome === 'applied';
}

/**
 * What is written beside a new message, before its item: its search entries (`searchEntriesOf`),
 * the first of which carries the small bodies when they are not in S3: that entry is the content
 * item (`contentKeyOf`).
 */
export interface MessageParts {
  entries: ReadonlyArray<{ pk: string; sk: string }>;
  /** The content item's bodies, when they are not in S3. */
  bodies?: ContentBodies;
}

const partItems = (parts: readonly MessageParts[]): Array<Record<string, unknown>> =>
  parts.flatMap((part) =>
    part.entries.map((entry, index) => ({
      pk: entry.pk,
      sk: entry.sk,
      ...(index === 0 && part.bodies !== undefined ? part.bodies : {}),
    })),
  );

/** Items written or deleted one request each, at most this many at a time. */
const itemConcurrency = 16;

/**
 * A new message's parts (docs/data-model.md, "Bodies" and "Search entries"), written once and
 * before the message item, so a message never exists without its bodies and is found by its
 * filters from the moment it exists. A search entry is its two keys (the content item adds the
 * bodies); none carries a `message_uuid`, an `account_id` or an index attribute. One PutItem each,
 * at the same time (add writes a few; IAM cannot limit BatchWriteItem to puts, so only the batch
 * function may use it: `putBatchMessageParts`).
 */
export async function putMessageParts(parts: readonly MessageParts[]): Promise<void> {
  await mapLimit(partItems(parts), itemConcurrency, (Item) => table.put({ Item }));
}

/** The parts of a whole batch, with BatchWriteItem (25 items a request). */
export async function putBatchMessageParts(parts: readonly MessageParts[]): Promise<void> {
  await writeInBatches(partItems(parts).map((Item) => ({ PutRequest: { Item } })));
}

/**
 * Removes the parts of messages that are gone (deleted) or were never stored (a failed add): their
 * search entries, the content item among them.
 */
export async function deleteMessageParts(parts: ReadonlyArray<Pick<MessageParts, 'entries'>>): Promise<void> {
  const itemKeys = parts.flatMap((part) => part.entries.map((entry) => ({ pk: entry.pk, sk: entry.sk })));
  await mapLimit(itemKeys, itemConcurrency, (Key) => table.delete({ Key }));
}

/** One message, read consistently. */
export async function getMessage(uuid: string): Promise<MessageItem | undefined> {
  const item = await table.get(keys.message(uuid), { ConsistentRead: true });
  return item === undefined ? undefined : stripKeys(item);
}

/** Several messages by uuid (dry-run deletes): at most 100 per call, as BatchGetItem allows. */
export async function getMessages(uuids: readonly string[]): Promise<Map<string, MessageItem>> {
  const found = new Map<string, MessageItem>();
  for (const item of await batchGetItems(uuids.map((uuid) => keys.message(uuid))))
    found.set(String(item.message_uuid), stripKeys(item));
  return found;
}

/**
 * Records that the content route stores `count` download objects of a message (the number only
 * grows), so that deleting the message removes them. False when the message no longer exists.
 */
export async function recordDownloads(uuid: string, count: number): Promise<boolean> {
  const result = await table.update({
    Key: keys.message(uuid),
    UpdateExpression: 'SET downloads = :count',
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(downloads) OR downloads < :count)',
    ExpressionAttributeValues: { ':count': count },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  // Already as many or more: recorded; no item: the message was deleted meanwhile.
  return result.outcome === 'applied' || result.item !== undefined;
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
  const { uuid, account, from } = transition;
  // The index keys follow the new status: the owner and creation time come from the item itself,
  // which the condition pins to `account`; only the status (and due time) are new. The history
  // entry joins the item's state, conditional on the state read (another write first: again).
  let current = await table.get(keys.message(uuid), { ConsistentRead: true });
  for (let attempt = 0; ; attempt++) {
    const update = transitionUpdate(transition, current);
    const classify = (item: table.Item | undefined): TransitionResult | 'again' => {
      if (item === undefined || text(item.account_id) !== account) return { outcome: 'not-found' };
      const status = text(item.status) ?? 'unknown';
      const fresh = readState(item);
      // Still in a status it may leave, but its state moved on (another write came first): again.
      if (
        from.includes(status as MessageStatus) &&
        !sameState(fresh.stored, current && readState(current).stored)
      )
        return attempt < 8 ? 'again' : { outcome: 'wrong-state', status };
      return { outcome: 'wrong-state', status };
    };
    let failure: table.Item | undefined;
    if (claim !== undefined) {
      const result = await withIdempotency(
        account,
        claim,
        { messageUuid: uuid, status: transition.to },
        { Update: update },
      );
      if (result.outcome === 'replay') return result;
      if (result.outcome === 'written') return { outcome: 'changed' };
      failure = result.item;
    } else {
      const result = await table.update(update);
      if (result.outcome === 'applied') return { outcome: 'changed' };
      failure = result.item;
    }
    const outcome = classify(failure);
    if (outcome !== 'again') return outcome;
    current = failure;
  }
}

/** The conditional update of a transition, built from the item as read (undefined: none). */
function transitionUpdate(transition: Transition, current: Record<string, unknown> | undefined) {
  const { uuid, account, from, to, entry, dueAt } = transition;
  const values: Record<string, unknown> = { ':account': account, ':to': to, ':now': entry.at };
  const names: Record<string, string> = { '#status': 'status' };
  from.forEach((status, index) => {
    values[`:from${index}`] = status;
  });
  const assignments = ['#status = :to', 'updated_at = :now'];
  const removals: string[] = [];
  let conditions = '';
  if (current !== undefined && current.account_id === account) {
    const change = indexChangeFor(
      {
        message_uuid: uuid,
        account_id: account,
        created_at: String(current.created_at),
        status: to,
        ...(isInFlight(to) ? { watch_at: firstWatchAt(Date.parse(entry.at)) } : {}),
        ...(typeof (current.scheduling as MessageItem['scheduling'] | undefined)?.send_at === 'string'
          ? { send_at: (current.scheduling as MessageItem['scheduling']).send_at }
          : {}),
      },
      from,
    );
    for (const [name, value] of Object.entries(change.set)) {
      assignments.push(`${name} = :${name}`);
      values[`:${name}`] = value;
    }
    removals.push(...change.remove);
    values[':created'] = current.created_at;
    const read = readState(current);
    const guard = stateGuard(read.stored);
    Object.assign(names, guard.names);
    Object.assign(values, guard.values);
    values[':state'] = encodeState({ ...read.state, history: appendHistory(read.state.history, [entry]) });
    assignments.push('#st = :state');
    if (read.stored === undefined) removals.push(...plainStateAttributes);
    conditions = ` AND created_at = :created AND ${guard.condition}`;
  }
  if (dueAt === null) removals.push('due_at');
  else {
    assignments.push('due_at = :dueAt');
    values[':dueAt'] = dueAt;
  }
  return {
    Key: keys.message(uuid),
    UpdateExpression: `SET ${assignments.join(', ')}${removals.length > 0 ? ` REMOVE ${removals.join(', ')}` : ''}`,
    ConditionExpression: `attribute_exists(pk) AND account_id = :account${conditions} AND #status IN (${from.map((_, i) => `:from${i}`).join(', ')})`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

export interface KeyPage {
  /** Sort keys `<created_at>#<uuid>` in index order (newest first). */
  keys: string[];
  /** DynamoDB returned a LastEvaluatedKey: the stream may hold more. */
  more: boolean;
  /** Index entries DynamoDB evaluated (ScannedCount): no filter expression is used, so = keys.length. */
  scannedCount: number;
}

export interface IndexStream {
  /** The listing lanes (gsi2), or `table` for the search entries, which are items keyed by their term. */
  index: 'gsi2' | 'table';
  partition: string;
}

export interface KeyQuery {
  /** Inclusive bounds on the creation time, UTC ISO. */
  createdFrom?: string;
  createdTo?: string;
  /** Continue after this sort key (`<created_at>#<uuid>`). */
  after?: string;
  limit: number;
}

const keyAttributes = {
  gsi2: { partition: 'gsi2pk', sort: 'gsi1sk' },
  table: { partition: 'pk', sort: 'sk' },
} as const;

/**
 * One page of an index partition's sort keys, newest first, by a key condition (never a Scan).
 * The indexes project keys only; the caller reads the items it keeps with `getMessages`.
 */
export async function queryIndexKeys(stream: IndexStream, query: KeyQuery): Promise<KeyPage> {
  const { partition: partitionName, sort: sortName } = keyAttributes[stream.index];
  const lower = query.createdFrom ?? '0';
  const upper = query.createdTo === undefined ? '~' : `${query.createdTo}#~`;
  let startKey: Record<string, string> | undefined;
  if (query.after !== undefined) {
    const uuid = query.after.slice(query.after.indexOf('#') + 1);
    // An index's start key names the item (table keys) and its place in the index; the table's
    // own keys are the place.
    startKey = {
      ...(stream.index === 'table' ? {} : keys.message(uuid)),
      [partitionName]: stream.partition,
      [sortName]: query.after,
    };
  }
  const page = await table.query({
    ...(stream.index === 'table' ? {} : { IndexName: stream.index }),
    KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
    ExpressionAttributeNames: { '#pk': partitionName, '#sk': sortName },
    ExpressionAttributeValues: { ':pk': stream.partition, ':lower': lower, ':upper': upper },
    ScanIndexForward: false,
    Limit: query.limit,
    ExclusiveStartKey: startKey,
  });
  return {
    keys: page.items.map((item) => String(item[sortName])),
    more: page.lastKey !== undefined,
    scannedCount: page.scannedCount,
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
  const result = await table.delete({
    Key: keys.message(uuid),
    ConditionExpression: `attribute_exists(pk) AND account_id = :account AND NOT (#status IN (${Object.keys(protectedValues).join(', ')}))`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':account': account, ...protectedValues },
    ReturnValues: 'ALL_OLD',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  if (result.outcome === 'applied') return { outcome: 'deleted', item: stripKeys(result.attributes ?? {}) };
  if (result.item === undefined) return { outcome: 'not_found' };
  if (text(result.item.account_id) !== account) return { outcome: 'unauthorized' };
  return { outcome: 'protected' };
}
