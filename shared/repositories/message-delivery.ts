import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/dynamo.ts';
import { guarded } from '../aws/faults.ts';
import { sqs } from '../aws/sqs.ts';
import { queueUrl, tableName } from '../config/storage.ts';
import type { HistoryEntry, MessageStatus, Recipient } from '../domain/delivery/status.ts';
import type { Address } from '../domain/messages/addresses.ts';
import {
  boundedEntry,
  clipDetail,
  type MessageItem,
  maxHistoryEntries,
  type StoredAttachment,
} from '../domain/messages/message.ts';
import { keys } from './keys.ts';
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
  gsi3sk?: string;
}

const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

function toMessage(item: Record<string, unknown>): DeliveryMessage {
  return {
    ...(item as unknown as DeliveryMessage),
    from: list<Address>(item.from),
    to: list<Address>(item.to),
    cc: list<Address>(item.cc),
    bcc: list<Address>(item.bcc),
    reply_to: list<Address>(item.reply_to),
    parts: (item.parts as DeliveryMessage['parts'] | undefined) ?? {},
    attachments: list(item.attachments),
    recipients: list<Recipient>(item.recipients),
    history: list<HistoryEntry>(item.history),
  };
}

/** The due index's sort key: UTC ISO time, then the uuid (docs/data-model.md). */
export const dueKey = (dueAtMs: number, messageUuid: string): string =>
  `${new Date(dueAtMs).toISOString()}#${messageUuid}`;

export const dueAtOf = (gsi3sk: string | undefined): number =>
  gsi3sk === undefined ? Number.NaN : Date.parse(gsi3sk.split('#')[0] ?? '');

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

function statusIndex(accountId: string, status: MessageStatus): Record<string, string> {
  return { status, gsi2pk: keys.messagesOfAccountByStatus(accountId, status) };
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
  message: Pick<DeliveryMessage, 'message_uuid' | 'account_id' | 'attempts'>,
  options: ClaimOptions,
): Promise<DeliveryMessage | undefined> {
  const leaseUntil = options.nowMs + options.leaseMs;
  const attempt = (message.attempts ?? 0) + 1;
  const condition =
    options.from === 'processing' ? '#status = :from AND lease_until <= :now' : '#status = :from';
  return change(message.message_uuid, {
    condition,
    values:
      options.from === 'processing'
        ? { ':from': options.from, ':now': options.nowMs }
        : { ':from': options.from },
    set: {
      ...statusIndex(message.account_id, 'processing'),
      lease_until: leaseUntil,
      attempts: attempt,
      updated_at: new Date(options.nowMs).toISOString(),
      gsi3pk: keys.due,
      gsi3sk: dueKey(leaseUntil, message.message_uuid),
    },
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
  message: Pick<DeliveryMessage, 'message_uuid' | 'account_id'>,
  outcome: RelayOutcome,
): Promise<DeliveryMessage | undefined> {
  return change(message.message_uuid, {
    condition: '#status = :processing',
    values: { ':processing': 'processing' },
    set: {
      ...statusIndex(message.account_id, outcome.status),
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
    remove: ['lease_until', 'gsi3pk', 'gsi3sk'],
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
      gsi3sk: dueKey(options.retryDueMs, message.message_uuid),
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
  message: Pick<DeliveryMessage, 'message_uuid' | 'account_id' | 'recipients'>,
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
    set: { ...statusIndex(message.account_id, 'failed'), recipients, updated_at: at },
    remove: ['lease_until', 'gsi3pk', 'gsi3sk'],
    history: [{ status: 'failed', at, detail: options.reason }],
  });
}

/** Dispatcher: a `scheduled` message whose send time is near becomes `queued`. */
export async function releaseScheduled(
  message: Pick<DeliveryMessage, 'message_uuid' | 'account_id'>,
  options: { nowMs: number; reconcileAtMs: number; detail: string },
): Promise<DeliveryMessage | undefined> {
  const at = new Date(options.nowMs).toISOString();
  return change(message.message_uuid, {
    condition: '#status = :scheduled',
    values: { ':scheduled': 'scheduled' },
    set: {
      ...statusIndex(message.account_id, 'queued'),
      updated_at: at,
      gsi3pk: keys.due,
      gsi3sk: dueKey(options.reconcileAtMs, message.message_uuid),
    },
    history: [{ status: 'queued', at, detail: options.detail }],
  });
}

/**
 * Dispatcher: moves the due time of a message it has just queued again, provided nothing moved it
 * meanwhile (same status, same due time).
 */
export async function postponeDue(
  message: Pick<DeliveryMessage, 'message_uuid' | 'status' | 'gsi3sk'>,
  options: { nowMs: number; nextDueMs: number; detail: string },
): Promise<DeliveryMessage | undefined> {
  const at = new Date(options.nowMs).toISOString();
  return change(message.message_uuid, {
    condition: '#status = :status AND gsi3sk = :due',
    values: { ':status': message.status, ':due': message.gsi3sk ?? '' },
    set: { gsi3sk: dueKey(options.nextDueMs, message.message_uuid), updated_at: at },
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
    const updated = await change(messageUuid, {
      condition: '#status = :was AND updated_at = :stamp',
      values: { ':was': current.status, ':stamp': current.updated_at },
      set: {
        ...statusIndex(current.account_id, next.status),
        recipients: next.recipients,
        updated_at: next.at > current.updated_at ? next.at : bump(current.updated_at),
      },
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

/** The due index: messages with a due time up to `untilMs`, oldest first, one page. */
export async function queryDue(
  untilMs: number,
  options: { limit: number; startKey?: Record<string, unknown> },
): Promise<{ items: DeliveryMessage[]; nextKey?: Record<string, unknown> }> {
  const result = await guarded('database', () =>
    dynamo().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi3',
        KeyConditionExpression: 'gsi3pk = :due AND gsi3sk <= :until',
        ExpressionAttributeValues: { ':due': keys.due, ':until': `${new Date(untilMs).toISOString()}#~` },
        Limit: options.limit,
        ExclusiveStartKey: options.startKey,
      }),
    ),
  );
  return { items: (result.Items ?? []).map(toMessage), nextKey: result.LastEvaluatedKey };
}

/** Puts `{"message_uuid"}` on the send queue, optionally delayed (0–900 s). */
export async function enqueueSend(messageUuid: string, delaySeconds = 0): Promise<void> {
  await guarded('queue', () =>
    sqs().send(
      new SendMessageCommand({
        QueueUrl: queueUrl(),
        MessageBody: JSON.stringify({ message_uuid: messageUuid }),
        DelaySeconds: Math.max(0, Math.min(900, Math.round(delaySeconds))),
      }),
    ),
  );
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
