import { BatchGetCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/dynamo.ts';
import { guarded } from '../aws/faults.ts';
import { tableName } from '../config/storage.ts';
import type { HistoryEntry, MessageStatus, Recipient } from '../domain/delivery/status.ts';
import type { Address } from '../domain/messages/addresses.ts';
import {
  boundedEntry,
  type ContentBodies,
  clipDetail,
  type MessageItem,
  maxHistoryEntries,
  partsAt,
  type StoredAttachment,
  sliceAt,
  unpackBodies,
} from '../domain/messages/message.ts';
import { indexChangeFor, keys } from './keys.ts';
import { getObjectBytes } from './message-objects.ts';

/**
 * The delivery pipeline's view of a message item (docs/data-model.md): claim with a lease, record
 * what the relay said, per-recipient statuses, history appends, and the due index (gsi3). Every
 * state change is a conditional update, so two workers never both move the same message.
 */
/**
 * The stored message (the messages API's item) plus what only the delivery pipeline writes.
 * Optional fields are optional because items written before a field existed may lack it.
 */
export interface DeliveryMessage
  extends Omit<MessageItem, 'subject' | 'headers' | 'scheduling' | 'attempts' | 'attachments'> {
  subject?: string;
  headers?: Record<string, string>;
  scheduling?: MessageItem['scheduling'];
  attachments: Array<Omit<StoredAttachment, 'size'> & { size?: number }>;
  attempts?: number;
  lease_until?: number;
  relay?: { message_id?: string; response?: string };
  due_at?: string;
}

/** What a status change needs to know to compute the message's index keys. */
type Indexed = Pick<DeliveryMessage, 'message_uuid' | 'account_id' | 'created_at' | 'scheduling'>;

const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

function toMessage(item: Record<string, unknown>): DeliveryMessage {
  return {
    ...(item as unknown as DeliveryMessage),
    from: list<Address>(item.from),
    to: list<Address>(item.to),
    cc: list<Address>(item.cc),
    bcc: list<Address>(item.bcc),
    reply_to: list<Address>(item.reply_to),
    content: (item.content as DeliveryMessage['content'] | undefined) ?? { store: 'item' },
    attachments: list(item.attachments),
    recipients: list<Recipient>(item.recipients),
    history: list<HistoryEntry>(item.history),
  };
}

/** The `due_at` attribute: when the dispatcher looks at the message again (UTC ISO). */
export const dueAtIso = (dueAtMs: number): string => new Date(dueAtMs).toISOString();

export const dueAtOf = (dueAt: string | undefined): number =>
  dueAt === undefined ? Number.NaN : Date.parse(dueAt);

export async function getDeliveryMessage(messageUuid: string): Promise<DeliveryMessage | undefined> {
  const result = await guarded('database', () =>
    dynamo().send(
      new GetCommand({ TableName: tableName(), Key: keys.message(messageUuid), ConsistentRead: true }),
    ),
  );
  return result.Item === undefined ? undefined : toMessage(result.Item);
}

interface Change {
  /** attribute name → value, written with SET */
  set?: Record<string, unknown>;
  remove?: string[];
  history?: HistoryEntry[];
  /** condition expression over `#status` and the placeholders in `values` */
  condition: string;
  values?: Record<string, unknown>;
}

/**
 * One conditional update of a message item. Returns the new item, or undefined when the condition
 * failed (the message moved on, or no longer exists).
 */
async function change(
  messageUuid: string,
  spec: Change,
  historyFull = false,
): Promise<DeliveryMessage | undefined> {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ...spec.values };
  const assignments: string[] = [];
  let index = 0;
  for (const [name, value] of Object.entries(spec.set ?? {})) {
    index += 1;
    names[`#a${index}`] = name;
    values[`:a${index}`] = value;
    assignments.push(`#a${index} = :a${index}`);
  }
  const history = (spec.history ?? []).map(boundedEntry);
  const latest = history[history.length - 1];
  let historyCondition = '';
  if (latest !== undefined) {
    names['#history'] = 'history';
    if (historyFull) {
      // The history is at its bound: the newest entry overwrites the last one (docs/data-model.md).
      values[':latest'] = boundedEntry({
        ...latest,
        detail: `history full, latest change: ${latest.detail ?? latest.status}`,
      });
      assignments.push(`#history[${maxHistoryEntries - 1}] = :latest`);
    } else {
      values[':history'] = history;
      values[':none'] = [];
      values[':room'] = maxHistoryEntries - history.length;
      assignments.push('#history = list_append(if_not_exists(#history, :none), :history)');
      historyCondition = ' AND (attribute_not_exists(#history) OR size(#history) <= :room)';
    }
  }
  const removals = (spec.remove ?? []).map((name, position) => {
    names[`#r${position}`] = name;
    return `#r${position}`;
  });
  const expression = [
    assignments.length > 0 ? `SET ${assignments.join(', ')}` : '',
    removals.length > 0 ? `REMOVE ${removals.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  try {
    const result = await guarded('database', () =>
      dynamo().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.message(messageUuid),
          UpdateExpression: expression,
          ConditionExpression: `attribute_exists(pk) AND (${spec.condition})${historyCondition}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: historyCondition === '' ? 'NONE' : 'ALL_OLD',
        }),
      ),
    );
    return result.Attributes === undefined ? undefined : toMessage(result.Attributes);
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    // Failed only because the history has no room left: make the change with the newest entry
    // in the last slot (the change's own condition still applies).
    const old = (error as { Item?: { history?: { L?: unknown[] } } }).Item;
    const length = old?.history?.L?.length;
    if (historyCondition !== '' && length !== undefined && length > maxHistoryEntries - history.length)
      return change(messageUuid, spec, true);
    return undefined;
  }
}

/**
 * The status and the index attributes that follow it (shared/repositories/keys.ts): an update
 * between in-flight statuses writes no index attribute, so it costs nothing on the indexes.
 */
function statusIndex(
  message: Indexed,
  status: MessageStatus,
  from: readonly string[],
): { set: Record<string, unknown>; remove: string[] } {
  const change = indexChangeFor(
    {
      message_uuid: message.message_uuid,
      account_id: message.account_id,
      created_at: message.created_at,
      status,
      ...(message.scheduling?.send_at === undefined ? {} : { send_at: message.scheduling.send_at }),
    },
    from,
  );
  return { set: { status, ...change.set }, remove: change.remove };
}

export interface ClaimOptions {
  from: 'queued' | 'scheduled' | 'processing';
  nowMs: number;
  leaseMs: number;
  detail?: string;
}

/**
 * Claims a message for sending: `queued` (or a due `scheduled`) → `processing`, or takes over a
 * `processing` message whose lease expired. The lease is also the message's due time in gsi3, so
 * the dispatcher finds it if this sender dies. Undefined when another sender was faster.
 */
export async function claimMessage(
  message: Indexed & Pick<DeliveryMessage, 'attempts'>,
  options: ClaimOptions,
): Promise<DeliveryMessage | undefined> {
  const leaseUntil = options.nowMs + options.leaseMs;
  const attempt = (message.attempts ?? 0) + 1;
  const condition =
    options.from === 'processing' ? '#status = :from AND lease_until <= :now' : '#status = :from';
  const index = statusIndex(message, 'processing', [options.from]);
  return change(message.message_uuid, {
    condition,
    values:
      options.from === 'processing'
        ? { ':from': options.from, ':now': options.nowMs }
        : { ':from': options.from },
    set: {
      ...index.set,
      lease_until: leaseUntil,
      attempts: attempt,
      updated_at: new Date(options.nowMs).toISOString(),
    },
    // While processing, the lease is the due time (no copy of it in `due_at`: fewer bytes per write).
    remove: [...index.remove, 'due_at'],
    history: [
      {
        status: 'processing',
        at: new Date(options.nowMs).toISOString(),
        detail: options.detail ?? `send attempt ${attempt}`,
      },
    ],
  });
}

export interface RelayOutcome {
  status: MessageStatus;
  recipients: Recipient[];
  relay?: { message_id?: string; response?: string };
  history: HistoryEntry[];
  at: string;
}

/**
 * Records what happened to a claimed message: `sent` / `delivered` / `bounced` / `failed` with the
 * recipients' statuses and the relay's reply. Leaves the due index and drops the lease.
 */
export async function recordOutcome(
  message: Indexed,
  outcome: RelayOutcome,
): Promise<DeliveryMessage | undefined> {
  const index = statusIndex(message, outcome.status, ['processing']);
  return change(message.message_uuid, {
    condition: '#status = :processing',
    values: { ':processing': 'processing' },
    set: {
      ...index.set,
      recipients: outcome.recipients,
      updated_at: outcome.at,
      ...(outcome.relay === undefined
        ? {}
        : {
            relay: {
              ...outcome.relay,
              ...(outcome.relay.response === undefined
                ? {}
                : { response: clipDetail(outcome.relay.response) }),
              ...(outcome.relay.message_id === undefined
                ? {}
                : { message_id: clipDetail(outcome.relay.message_id) }),
            },
          }),
    },
    remove: [...index.remove, 'lease_until', 'due_at'],
    history: outcome.history,
  });
}

/**
 * A send attempt failed for a reason worth retrying: the lease is released so the queue's
 * redelivery can claim it at once, and the due time moves to `retryDueMs`, when the dispatcher steps
 * in only if that redelivery never comes.
 */
export async function releaseClaim(
  message: Pick<DeliveryMessage, 'message_uuid' | 'lease_until'>,
  options: { nowMs: number; retryDueMs: number; detail: string },
): Promise<DeliveryMessage | undefined> {
  return change(message.message_uuid, {
    condition: '#status = :processing AND lease_until = :lease',
    values: { ':processing': 'processing', ':lease': message.lease_until ?? 0 },
    set: {
      lease_until: options.nowMs,
      updated_at: new Date(options.nowMs).toISOString(),
      due_at: dueAtIso(options.retryDueMs),
    },
    history: [{ status: 'processing', at: new Date(options.nowMs).toISOString(), detail: options.detail }],
  });
}

export interface FailOptions {
  reason: string;
  nowMs: number;
  /** Statuses the message may be in; `processing` only counts when its lease has expired, unless held. */
  from: ReadonlyArray<'queued' | 'scheduled' | 'processing' | 'waiting'>;
  /** The caller holds this lease (a sender failing its own claim). */
  heldLease?: number;
}

/** Marks a message `failed` (pending recipients too), if it is still in one of `from`. */
export async function markFailed(
  message: Indexed & Pick<DeliveryMessage, 'recipients'>,
  options: FailOptions,
): Promise<DeliveryMessage | undefined> {
  const at = new Date(options.nowMs).toISOString();
  const values: Record<string, unknown> = {};
  const clauses = options.from.map((status) => {
    values[`:${status}`] = status;
    if (status !== 'processing') return `#status = :${status}`;
    if (options.heldLease !== undefined) {
      values[':held'] = options.heldLease;
      return '#status = :processing AND lease_until = :held';
    }
    values[':now'] = options.nowMs;
    return '#status = :processing AND (attribute_not_exists(lease_until) OR lease_until <= :now)';
  });
  const index = statusIndex(message, 'failed', options.from);
  const recipients = message.recipients.map((recipient) =>
    recipient.status === 'pending'
      ? { ...recipient, status: 'failed' as const, detail: options.reason, updated_at: at }
      : recipient,
  );
  return change(message.message_uuid, {
    // DynamoDB refuses redundant parentheses, so a single clause goes unwrapped.
    condition:
      clauses.length === 1 ? (clauses[0] as string) : clauses.map((clause) => `(${clause})`).join(' OR '),
    values,
    set: { ...index.set, recipients, updated_at: at },
    remove: [...index.remove, 'lease_until', 'due_at'],
    history: [{ status: 'failed', at, detail: options.reason }],
  });
}

/** Dispatcher: a `scheduled` message whose send time is near becomes `queued`. */
export async function releaseScheduled(
  message: Indexed,
  options: { nowMs: number; reconcileAtMs: number; detail: string },
): Promise<DeliveryMessage | undefined> {
  const at = new Date(options.nowMs).toISOString();
  const index = statusIndex(message, 'queued', ['scheduled']);
  return change(message.message_uuid, {
    condition: '#status = :scheduled',
    values: { ':scheduled': 'scheduled' },
    set: {
      ...index.set,
      updated_at: at,
      due_at: dueAtIso(options.reconcileAtMs),
    },
    remove: index.remove,
    history: [{ status: 'queued', at, detail: options.detail }],
  });
}

/**
 * Dispatcher: moves the due time of a message it has just queued again, provided nothing moved it
 * meanwhile (same status, same due time).
 */
export async function postponeDue(
  message: Pick<DeliveryMessage, 'message_uuid' | 'status' | 'due_at' | 'lease_until'>,
  options: { nowMs: number; nextDueMs: number; detail: string },
): Promise<DeliveryMessage | undefined> {
  const at = new Date(options.nowMs).toISOString();
  return change(message.message_uuid, {
    // Unchanged since it was read: the same due time, or (a claimed message) no due time and the
    // same lease.
    condition:
      message.due_at !== undefined
        ? '#status = :status AND due_at = :due'
        : message.lease_until !== undefined
          ? '#status = :status AND attribute_not_exists(due_at) AND lease_until = :lease'
          : '#status = :status AND attribute_not_exists(due_at) AND attribute_not_exists(lease_until)',
    values:
      message.due_at !== undefined
        ? { ':status': message.status, ':due': message.due_at }
        : message.lease_until !== undefined
          ? { ':status': message.status, ':lease': message.lease_until }
          : { ':status': message.status },
    set: { due_at: dueAtIso(options.nextDueMs), updated_at: at },
    history: [{ status: message.status, at, detail: options.detail }],
  });
}

/**
 * Read-modify-write for asynchronous results (SES events): `mutate` gets the current item and
 * returns the change or undefined for "nothing to do". Retried on a concurrent write.
 */
export async function updateWithRetry(
  messageUuid: string,
  mutate: (
    message: DeliveryMessage,
  ) => { status: MessageStatus; recipients: Recipient[]; history: HistoryEntry[]; at: string } | undefined,
): Promise<DeliveryMessage | 'missing' | 'unchanged'> {
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const current = await getDeliveryMessage(messageUuid);
    if (current === undefined) return 'missing';
    const next = mutate(current);
    if (next === undefined) return 'unchanged';
    const index = statusIndex(current, next.status, [current.status]);
    const updated = await change(messageUuid, {
      condition: '#status = :was AND updated_at = :stamp',
      values: { ':was': current.status, ':stamp': current.updated_at },
      set: {
        ...(next.status === current.status ? { status: next.status } : index.set),
        recipients: next.recipients,
        updated_at: next.at > current.updated_at ? next.at : bump(current.updated_at),
      },
      ...(next.status === current.status || index.remove.length === 0 ? {} : { remove: index.remove }),
      history: next.history,
    });
    if (updated !== undefined) return updated;
  }
  throw new Error('message kept changing; giving up this time');
}

/** A timestamp strictly after `stamp`, so the optimistic check always sees a change. */
function bump(stamp: string): string {
  const time = Date.parse(stamp);
  return new Date((Number.isNaN(time) ? Date.now() : time) + 1).toISOString();
}

/**
 * One page of a work shard (gsi3): the scheduled messages due up to `untilMs` (`DUE#<n>`), or
 * every in-flight message (`INFLIGHT#<n>`). The index holds keys only; the page's items are read
 * with one consistent BatchGetItem.
 */
export async function queryWork(
  family: 'due' | 'inFlight',
  shard: number,
  options: { untilMs: number; limit: number; startKey?: Record<string, unknown> },
): Promise<{ items: DeliveryMessage[]; nextKey?: Record<string, unknown> }> {
  const due = family === 'due';
  const result = await guarded('database', () =>
    dynamo().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi3',
        KeyConditionExpression: due ? 'gsi3pk = :pk AND gsi3sk <= :until' : 'gsi3pk = :pk',
        ExpressionAttributeValues: due
          ? { ':pk': keys.due(shard), ':until': `${new Date(options.untilMs).toISOString()}#~` }
          : { ':pk': keys.inFlight(shard) },
        Limit: options.limit,
        ExclusiveStartKey: options.startKey,
      }),
    ),
  );
  const uuids = (result.Items ?? []).map((item) => String(item.pk).slice('MESSAGE#'.length));
  const items: DeliveryMessage[] = [];
  for (let start = 0; start < uuids.length; start += 100) {
    const batch = uuids.slice(start, start + 100);
    let request: Record<string, { Keys: Record<string, string>[]; ConsistentRead: boolean }> | undefined = {
      [tableName()]: { Keys: batch.map((uuid) => keys.message(uuid)), ConsistentRead: true },
    };
    for (let attempt = 0; request !== undefined && Object.keys(request).length > 0; attempt++) {
      const pending: Record<string, { Keys: Record<string, string>[]; ConsistentRead: boolean }> = request;
      const read = await guarded('database', () =>
        dynamo().send(new BatchGetCommand({ RequestItems: pending })),
      );
      items.push(...(read.Responses?.[tableName()] ?? []).map(toMessage));
      request = read.UnprocessedKeys as typeof request;
      if (attempt > 8) throw new Error('BatchGetItem kept returning unprocessed keys');
    }
  }
  return { items, nextKey: result.LastEvaluatedKey };
}

/**
 * A message's bodies and attachments: from the item when inline, else from its one content
 * object (a single S3 GET), cut at the stored byte ranges.
 */
export async function readMessageContent(message: DeliveryMessage): Promise<{
  text?: Buffer;
  html?: Buffer;
  eml?: Buffer;
  attachments: Buffer[];
}> {
  const content = message.content;
  if (content.store !== 's3') {
    const result = await guarded('database', () =>
      dynamo().send(
        new GetCommand({
          TableName: tableName(),
          Key: keys.messageContent(message.message_uuid),
          ConsistentRead: true,
        }),
      ),
    );
    const bodies = result.Item as (ContentBodies & { pk: string }) | undefined;
    if (bodies?.z === undefined)
      throw new MissingObjectError(`messages/${message.message_uuid}/content item`);
    return { ...unpackBodies(bodies), attachments: [] };
  }
  const object = await readMessageObject(content.key);
  const parts = partsAt(object, content);
  const attachments = message.attachments.map((attachment) =>
    sliceAt(object, [attachment.offset, attachment.size ?? 0]),
  );
  if (parts === undefined || attachments.some((bytes) => bytes === undefined))
    throw new MissingObjectError(content.key);
  return { ...parts, attachments: attachments as Buffer[] };
}

export class MissingObjectError extends Error {
  constructor(key: string) {
    super(`Stored content is missing (${key.split('/').slice(2).join('/') || key})`);
    this.name = 'MissingObjectError';
  }
}

/** A stored body part or attachment of a message. */
export async function readMessageObject(key: string): Promise<Buffer> {
  try {
    return await getObjectBytes(key);
  } catch (error) {
    const name = (error as { name?: string; Code?: string }).name;
    if (name === 'NoSuchKey' || name === 'NotFound') throw new MissingObjectError(key);
    throw error;
  }
}
