import {
  appendHistory,
  type ContentBodies,
  clipDetail,
  contentKeyOf,
  encodeState,
  firstWatchAt,
  indexChangeFor,
  type MessageItem,
  type MessageState,
  messageIndexAttributes,
  partsAt,
  plainStateAttributes,
  readState,
  type StoredAttachment,
  sameState,
  sliceAt,
  stateAttribute,
  stateGuard,
  unpackBodies,
  watchEntryOf,
} from '../../messages/index.ts';
import type { Address } from '../../platform/mail/addresses.ts';
import { getObjectBytes } from '../../platform/objects/objects.ts';
import { batchGetItems } from '../../platform/table/batch-get.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import type { HistoryEntry, MessageStatus, Recipient } from '../model/status.ts';

/**
 * The delivery pipeline's view of a message item (docs/data-model.md): claim with a lease, record
 * what the relay said, per-recipient statuses, history appends, and the work index (gsi3). Every
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
  /** How the send the relay answered was composed (docs/data-model.md): what rebuilds it exactly. */
  composed?: ComposedRecord;
  due_at?: string;
  /** The work-index entry (gsi3) the item carries: a watch entry (`WATCH#<n>`) or a due entry. */
  gsi3pk?: string;
  gsi3sk?: string;
  /**
   * The stored state as read (message-state.ts): the next write of this message is conditional on
   * it. Null for an item with the plain attributes; absent on an object not read from the table.
   */
  stored_state?: Uint8Array | null;
}

/**
 * The facts of a composition beyond the stored message: the time (UTC ISO; the Date header and the
 * DKIM `t=`), the selectors of the keys that signed (none: unsigned) and the relay it was made for.
 */
export interface ComposedRecord {
  at: string;
  selectors?: string[];
  transport: 'smtp' | 'ses';
  /** A broadcast's one-click unsubscribe URL as sent (docs/streams.md). */
  unsubscribe_url?: string;
  /** Tracked mail (docs/tracking.md): the settings its copies were composed with, for every attempt. */
  tracking?: { opens: boolean; clicks: boolean };
  /** Tracked mail: each copy the relay accepted, by the recipient's position, and how it was composed. */
  copies?: SentCopy[];
}

/** One tracked copy the relay accepted: a retry never sends it again, the content route rebuilds it. */
export interface SentCopy {
  recipient: number;
  at: string;
  selectors?: string[];
}

/** What a status change needs to know to compute the message's index keys. */
type Indexed = Pick<DeliveryMessage, 'message_uuid' | 'account_id' | 'created_at' | 'scheduling'>;

const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

function toMessage(item: Record<string, unknown>): DeliveryMessage {
  const { [stateAttribute]: _stored, ...rest } = item;
  const { state, stored } = readState(item);
  const message: DeliveryMessage = {
    ...(rest as unknown as DeliveryMessage),
    from: list<Address>(item.from),
    to: list<Address>(item.to),
    cc: list<Address>(item.cc),
    bcc: list<Address>(item.bcc),
    reply_to: list<Address>(item.reply_to),
    content: (item.content as DeliveryMessage['content'] | undefined) ?? { store: 'item' },
    attachments: list(item.attachments),
    recipients: state.recipients,
    history: state.history,
    stored_state: stored ?? null,
  };
  if (state.relay !== undefined) message.relay = state.relay;
  if (state.composed !== undefined) message.composed = state.composed;
  return message;
}

/** The `due_at` attribute: when the dispatcher looks at the message again (UTC ISO). */
export const dueAtIso = (dueAtMs: number): string => new Date(dueAtMs).toISOString();

export const dueAtOf = (dueAt: string | undefined): number =>
  dueAt === undefined ? Number.NaN : Date.parse(dueAt);

export async function getDeliveryMessage(messageUuid: string): Promise<DeliveryMessage | undefined> {
  const item = await table.get(keys.message(messageUuid), { ConsistentRead: true });
  return item === undefined ? undefined : toMessage(item);
}

interface Change {
  /** attribute name → value, written with SET */
  set?: Record<string, unknown>;
  remove?: string[];
  /** History entries to append (message-state.ts bounds the history). */
  history?: HistoryEntry[];
  /** The recipients' new statuses, or how they follow from the current ones; absent: as they are. */
  recipients?: Recipient[] | ((current: readonly Recipient[]) => Recipient[]);
  relay?: MessageState['relay'];
  composed?: MessageState['composed'];
  /** condition expression over `#status` and the placeholders in `values` */
  condition: string;
  values?: Record<string, unknown>;
}

/** The state a change starts from: the message's as read, or the item's now if it was not read. */
async function startingState(
  message: Pick<DeliveryMessage, 'message_uuid'> & Partial<DeliveryMessage>,
): Promise<{ state: MessageState; stored?: Uint8Array } | undefined> {
  if (
    message.stored_state !== undefined &&
    message.recipients !== undefined &&
    message.history !== undefined
  ) {
    const state: MessageState = { recipients: message.recipients, history: message.history };
    if (message.relay !== undefined) state.relay = message.relay;
    if (message.composed !== undefined) state.composed = message.composed;
    return message.stored_state === null ? { state } : { state, stored: message.stored_state };
  }
  const current = await getDeliveryMessage(message.message_uuid);
  return current === undefined ? undefined : startingState(current);
}

/**
 * One conditional update of a message item: the attributes of `spec`, and the new state (the
 * recipients, the history with the entries appended, the relay's answer) under the condition that
 * the stored state is still the one it was built from. When another write changed the state first
 * (a history entry of the dispatcher, say), the new state is built again from the item as the
 * failed condition returned it. Returns the new item, or undefined when the change's own condition
 * failed (the message moved on, or no longer exists).
 */
async function change(
  message: Pick<DeliveryMessage, 'message_uuid'> & Partial<DeliveryMessage>,
  spec: Change,
): Promise<DeliveryMessage | undefined> {
  let base = await startingState(message);
  for (let attempt = 0; base !== undefined && attempt < 8; attempt++) {
    const next: MessageState = {
      ...base.state,
      recipients:
        typeof spec.recipients === 'function'
          ? spec.recipients(base.state.recipients)
          : (spec.recipients ?? base.state.recipients),
      history: appendHistory(base.state.history, spec.history ?? []),
    };
    if (spec.relay !== undefined) next.relay = spec.relay;
    if (spec.composed !== undefined) next.composed = spec.composed;
    const guard = stateGuard(base.stored);
    const names: Record<string, string> = { '#status': 'status', ...guard.names };
    const values: Record<string, unknown> = { ...spec.values, ...guard.values, ':state': encodeState(next) };
    const assignments = ['#st = :state'];
    let index = 0;
    for (const [name, value] of Object.entries(spec.set ?? {})) {
      index += 1;
      names[`#a${index}`] = name;
      values[`:a${index}`] = value;
      assignments.push(`#a${index} = :a${index}`);
    }
    // An item with the plain attributes loses them as its state is compressed.
    const removed = [...(spec.remove ?? []), ...(base.stored === undefined ? plainStateAttributes : [])];
    const removals = removed.map((name, position) => {
      names[`#r${position}`] = name;
      return `#r${position}`;
    });
    const result = await table.update({
      Key: keys.message(message.message_uuid),
      UpdateExpression: `SET ${assignments.join(', ')}${removals.length > 0 ? ` REMOVE ${removals.join(', ')}` : ''}`,
      ConditionExpression: `attribute_exists(pk) AND (${spec.condition}) AND ${guard.condition}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    if (result.outcome === 'applied')
      return result.attributes === undefined ? undefined : toMessage(result.attributes);
    if (result.item === undefined) return undefined;
    const fresh = readState(result.item);
    // The state is as it was built from: the change's own condition failed.
    if (sameState(fresh.stored, base.stored)) return undefined;
    base = fresh;
  }
  if (base === undefined) return undefined;
  throw new Error('the message kept changing; giving up this time');
}

/**
 * The status and the index attributes that follow it (shared/platform/table/keys.ts): an update
 * within a listing lane that keeps the message in flight or settles it writes no index attribute,
 * so it costs nothing on the indexes. `watchAt`: the watch time, should the change put the message
 * in flight.
 */
function statusIndex(
  message: Indexed,
  status: MessageStatus,
  from: readonly string[],
  watchAt?: string,
): { set: Record<string, unknown>; remove: string[] } {
  const change = indexChangeFor(
    {
      message_uuid: message.message_uuid,
      account_id: message.account_id,
      created_at: message.created_at,
      status,
      ...(message.scheduling?.send_at === undefined ? {} : { send_at: message.scheduling.send_at }),
      ...(watchAt === undefined ? {} : { watch_at: watchAt }),
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
 * `processing` message whose lease expired. The lease is the message's due time; its watch entry
 * stays where it is (the dispatcher looks at the lease when the entry comes up, and re-arms the
 * entry to it if it has not expired), so a claim writes no index. A claim straight from
 * `scheduled` puts the message in flight, watched at the end of the lease. Undefined when another
 * sender was faster.
 */
export async function claimMessage(
  message: Indexed & Partial<DeliveryMessage>,
  options: ClaimOptions,
): Promise<DeliveryMessage | undefined> {
  const leaseUntil = options.nowMs + options.leaseMs;
  const attempt = (message.attempts ?? 0) + 1;
  const condition =
    options.from === 'processing' ? '#status = :from AND lease_until <= :now' : '#status = :from';
  const index = statusIndex(message, 'processing', [options.from], dueAtIso(leaseUntil));
  return change(message, {
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
  composed?: ComposedRecord;
  history: HistoryEntry[];
  at: string;
}

/**
 * Records what happened to a claimed message: `sent` / `delivered` / `bounced` / `failed` with the
 * recipients' statuses and the relay's reply, and drops the lease. `sent` and `delivered` stay on
 * the accepted lane and the watch entry is left behind, so the common outcome writes no index.
 */
export async function recordOutcome(
  message: Indexed & Partial<DeliveryMessage>,
  outcome: RelayOutcome,
): Promise<DeliveryMessage | undefined> {
  const index = statusIndex(message, outcome.status, ['processing']);
  return change(message, {
    condition: '#status = :processing',
    values: { ':processing': 'processing' },
    set: { ...index.set, updated_at: outcome.at },
    remove: [...index.remove, 'lease_until', 'due_at'],
    recipients: outcome.recipients,
    ...(outcome.relay === undefined
      ? {}
      : {
          relay: {
            ...outcome.relay,
            ...(outcome.relay.response === undefined ? {} : { response: clipDetail(outcome.relay.response) }),
            ...(outcome.relay.message_id === undefined
              ? {}
              : { message_id: clipDetail(outcome.relay.message_id) }),
          },
        }),
    ...(outcome.composed === undefined ? {} : { composed: outcome.composed }),
    history: outcome.history,
  });
}

/**
 * A send attempt failed for a reason worth retrying: the lease is released so the queue's
 * redelivery can claim it at once, and the due time moves to `retryDueMs`, when the dispatcher steps
 * in only if that redelivery never comes.
 */
export async function releaseClaim(
  message: Pick<DeliveryMessage, 'message_uuid' | 'lease_until'> & Partial<DeliveryMessage>,
  options: { nowMs: number; retryDueMs: number; detail: string; progress?: SendProgress },
): Promise<DeliveryMessage | undefined> {
  const progress = options.progress;
  return change(message, {
    condition: '#status = :processing AND lease_until = :lease',
    values: { ':processing': 'processing', ':lease': message.lease_until ?? 0 },
    set: {
      lease_until: options.nowMs,
      updated_at: new Date(options.nowMs).toISOString(),
      due_at: dueAtIso(options.retryDueMs),
    },
    ...(progress === undefined ? {} : { recipients: progress.recipients, composed: progress.composed }),
    history: [
      ...(progress?.history ?? []),
      { status: 'processing', at: new Date(options.nowMs).toISOString(), detail: options.detail },
    ],
  });
}

/**
 * A tracked copy the relay accepted, written before the next copy goes out (docs/tracking.md,
 * "Copies"): its recipient's status and entries, and the composition record with the copy, under
 * the condition that the sender still holds its lease. The message stays `processing`. Undefined
 * when the lease is no longer the sender's.
 */
export async function recordCopyProgress(
  message: Pick<DeliveryMessage, 'message_uuid' | 'lease_until'> & Partial<DeliveryMessage>,
  progress: SendProgress,
): Promise<DeliveryMessage | undefined> {
  return change(message, {
    condition: '#status = :processing AND lease_until = :lease',
    values: { ':processing': 'processing', ':lease': message.lease_until ?? 0 },
    recipients: progress.recipients,
    composed: progress.composed,
    history: progress.history,
  });
}

/**
 * What an interrupted send of a tracked message already did (docs/tracking.md): the copies the
 * relay accepted, with the recipients' statuses and history entries they led to, written with the
 * release so that the retry sends only the copies still owed.
 */
export interface SendProgress {
  recipients: Recipient[];
  history: HistoryEntry[];
  composed: ComposedRecord;
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
  message: Indexed & Partial<DeliveryMessage>,
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
  return change(message, {
    // DynamoDB refuses redundant parentheses, so a single clause goes unwrapped.
    condition:
      clauses.length === 1 ? (clauses[0] as string) : clauses.map((clause) => `(${clause})`).join(' OR '),
    values,
    set: { ...index.set, updated_at: at },
    recipients: (current) =>
      current.map((recipient) =>
        recipient.status === 'pending'
          ? { ...recipient, status: 'failed' as const, detail: options.reason, updated_at: at }
          : recipient,
      ),
    remove: [...index.remove, 'lease_until', 'due_at'],
    history: [{ status: 'failed', at, detail: options.reason }],
  });
}

/**
 * Dispatcher: a `scheduled` message whose send time is near becomes `queued`; its due entry becomes
 * a watch entry.
 */
export async function releaseScheduled(
  message: Indexed & Partial<DeliveryMessage>,
  options: { nowMs: number; sendAtMs: number; reconcileAtMs: number; detail: string },
): Promise<DeliveryMessage | undefined> {
  const at = new Date(options.nowMs).toISOString();
  // Watched from when it is sent, as a message added then would be.
  const index = statusIndex(message, 'queued', ['scheduled'], firstWatchAt(options.sendAtMs));
  return change(message, {
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
 * Dispatcher: moves the due time of a message it has just queued again, and its watch entry to
 * `watchAtMs`, provided nothing moved it meanwhile (same status, same due time).
 */
export async function postponeDue(
  message: Pick<DeliveryMessage, 'message_uuid' | 'status' | 'due_at' | 'lease_until'> &
    Partial<DeliveryMessage>,
  options: { nowMs: number; nextDueMs: number; watchAtMs: number; detail: string },
): Promise<DeliveryMessage | undefined> {
  const at = new Date(options.nowMs).toISOString();
  return change(message, {
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
    set: {
      due_at: dueAtIso(options.nextDueMs),
      updated_at: at,
      ...watchEntryOf(message.message_uuid, dueAtIso(options.watchAtMs)),
    },
    history: [{ status: message.status, at, detail: options.detail }],
  });
}

/**
 * Dispatcher: moves the watch entry of an in-flight message that is not due yet to when it will be
 * (the rare path: a message still queued or processing when its entry comes up). Conditional on the
 * entry being where it was read and the message still in flight; the message's state is untouched.
 * False when either moved meanwhile.
 */
export async function rearmWatch(
  message: Pick<DeliveryMessage, 'message_uuid' | 'gsi3sk'>,
  watchAtMs: number,
): Promise<boolean> {
  const entry = watchEntryOf(message.message_uuid, dueAtIso(watchAtMs));
  const result = await table.update({
    Key: keys.message(message.message_uuid),
    UpdateExpression: 'SET gsi3pk = :pk, gsi3sk = :sk',
    ConditionExpression: `${message.gsi3sk === undefined ? 'attribute_not_exists(gsi3sk)' : 'gsi3sk = :seen'} AND #status IN (:queued, :processing)`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':pk': entry.gsi3pk,
      ':sk': entry.gsi3sk,
      ...(message.gsi3sk === undefined ? {} : { ':seen': message.gsi3sk }),
      ':queued': 'queued',
      ':processing': 'processing',
    },
  });
  return result.outcome === 'applied';
}

/**
 * Dispatcher: puts a watch entry it could not handle (an item that cannot be decoded, an action that
 * kept failing) at `watchAtMs`, so the shard's mark can pass it and it comes up again then. Only the
 * sort key changes, conditional on the entry being where it was read: an entry moved meanwhile was
 * moved ahead by its writer. False when the entry is not known (nothing was written).
 */
export async function deferWatch(entry: WorkEntry, watchAtMs: number): Promise<boolean> {
  if (entry.gsi3pk === undefined || entry.gsi3sk === undefined) return false;
  // A failed condition: the entry was moved ahead by its writer meanwhile.
  await table.update({
    Key: keys.message(entry.message_uuid),
    UpdateExpression: 'SET gsi3sk = :sk',
    ConditionExpression: 'gsi3pk = :pk AND gsi3sk = :seen',
    ExpressionAttributeValues: {
      ':pk': entry.gsi3pk,
      ':seen': entry.gsi3sk,
      ':sk': `${dueAtIso(watchAtMs)}#${entry.message_uuid}`,
    },
  });
  return true;
}

/**
 * Dispatcher, for one release after the watch entries replaced the in-flight index: moves a message
 * still on `INFLIGHT#<n>` to its listing lane and, in flight, to its watch entry (at `watchAtMs`);
 * a settled one (settled by this release, which leaves the work index alone) just leaves the old
 * index. Conditional on it still being there with the status read (docs/decisions/0020-watch-entries.md). False when it was not.
 */
export async function adoptLegacyInFlight(
  message: Pick<DeliveryMessage, 'message_uuid' | 'account_id' | 'created_at' | 'status' | 'gsi3pk'>,
  watchAtMs: number,
): Promise<boolean> {
  // Every index attribute of the new layout but the sort key, which the item already has.
  const { gsi1sk: _sortKey, ...set } = messageIndexAttributes({
    message_uuid: message.message_uuid,
    account_id: message.account_id,
    created_at: message.created_at,
    status: message.status,
    watch_at: dueAtIso(watchAtMs),
  });
  const update = table.setAttributes(set);
  const result = await table.update({
    Key: keys.message(message.message_uuid),
    UpdateExpression: `${update.expression}${set.gsi3pk === undefined ? ' REMOVE gsi3pk, gsi3sk' : ''}`,
    // The lane follows the status read: a message whose status changed since is left for the next
    // run (still on the old index), which reads it again.
    ConditionExpression: 'gsi3pk = :legacy AND #status = :status',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ...update.values,
      ':legacy': message.gsi3pk ?? '',
      ':status': message.status,
    },
  });
  return result.outcome === 'applied';
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
    const updated = await change(current, {
      condition: '#status = :was AND updated_at = :stamp',
      values: { ':was': current.status, ':stamp': current.updated_at },
      set: {
        ...(next.status === current.status ? { status: next.status } : index.set),
        updated_at: next.at > current.updated_at ? next.at : bump(current.updated_at),
      },
      recipients: next.recipients,
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

/** The entry families of the work index (gsi3) the dispatcher reads. */
export type WorkFamily = 'due' | 'watch' | 'legacy';

const familyKey: Record<WorkFamily, (shard: number) => string> = {
  due: keys.due,
  watch: keys.watch,
  legacy: keys.legacyInFlight,
};

/**
 * One page of a work shard (gsi3), oldest first: held messages due up to `untilMs` (`DUE#<n>`),
 * watch entries with a watch time in `(fromMs, untilMs]` (`WATCH#<n>`; from the start without
 * `fromMs`), or every entry of the in-flight index of earlier releases (`INFLIGHT#<n>`). The index
 * holds keys only; the page's items are read with one consistent BatchGetItem. `unreadable`: the
 * uuids of items that could not be decoded; `lastKey`: the sort key of the page's last entry.
 */
/** A message's entry on the work index (gsi3), as read. */
export interface WorkEntry {
  message_uuid: string;
  gsi3pk?: string;
  gsi3sk?: string;
}

export async function queryWork(
  family: WorkFamily,
  shard: number,
  options: { fromMs?: number; untilMs: number; limit: number; startKey?: Record<string, unknown> },
): Promise<{
  items: DeliveryMessage[];
  unreadable: WorkEntry[];
  lastKey?: string;
  nextKey?: Record<string, unknown>;
}> {
  const until = `${new Date(options.untilMs).toISOString()}#~`;
  const values: Record<string, string> = { ':pk': familyKey[family](shard) };
  let condition = 'gsi3pk = :pk';
  if (family === 'watch' && options.fromMs !== undefined) {
    condition += ' AND gsi3sk BETWEEN :from AND :until';
    values[':from'] = `${new Date(options.fromMs).toISOString()}#~`;
    values[':until'] = until;
  } else if (family !== 'legacy') {
    condition += ' AND gsi3sk <= :until';
    values[':until'] = until;
  }
  const page = await table.query({
    IndexName: 'gsi3',
    KeyConditionExpression: condition,
    ExpressionAttributeValues: values,
    Limit: options.limit,
    ExclusiveStartKey: options.startKey,
  });
  const entries = page.items;
  const items: DeliveryMessage[] = [];
  // An item that cannot be decoded (its state is corrupt) does not hold up the rest of the page.
  const unreadable: WorkEntry[] = [];
  const read = await batchGetItems(
    entries.map((entry) => keys.message(String(entry.pk).slice('MESSAGE#'.length))),
  );
  for (const item of read) {
    try {
      items.push(toMessage(item));
    } catch {
      unreadable.push({
        message_uuid: String(item.message_uuid ?? String(item.pk).slice('MESSAGE#'.length)),
        ...(typeof item.gsi3pk === 'string' ? { gsi3pk: item.gsi3pk } : {}),
        ...(typeof item.gsi3sk === 'string' ? { gsi3sk: item.gsi3sk } : {}),
      });
    }
  }
  const last = entries[entries.length - 1];
  return {
    items,
    unreadable,
    ...(last === undefined ? {} : { lastKey: String(last.gsi3sk) }),
    nextKey: page.lastKey,
  };
}

/**
 * The dispatcher's marks, one per watch shard (epoch ms): every watch entry up to a shard's mark
 * has been processed. One consistent Query of a single partition (32 small items: one page); a
 * shard without one has none.
 */
export async function readDispatchMarks(): Promise<Map<number, number>> {
  const page = await table.query({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.dispatchMarks },
    ConsistentRead: true,
  });
  const marks = new Map<number, number>();
  for (const item of page.items) {
    const shard = Number(String(item.sk).slice('WATCH#'.length));
    if (Number.isInteger(shard) && typeof item.at === 'number') marks.set(shard, item.at);
  }
  return marks;
}

/**
 * Moves a watch shard's mark forward to `atMs`, never back: of two overlapping runs, the later
 * mark stays. False when the mark was already there or further.
 */
export async function advanceDispatchMark(shard: number, atMs: number): Promise<boolean> {
  const result = await table.update({
    Key: keys.dispatchMark(shard),
    UpdateExpression: 'SET #at = :at',
    ConditionExpression: 'attribute_not_exists(#at) OR #at < :at',
    ExpressionAttributeNames: { '#at': 'at' },
    ExpressionAttributeValues: { ':at': atMs },
  });
  return result.outcome === 'applied';
}

/** A message's bodies and attachments, as bytes. */
export interface MessageBodies {
  text?: Buffer;
  html?: Buffer;
  eml?: Buffer;
  attachments: Buffer[];
}

/**
 * A message's bodies and attachments: from the item when inline, else from its one content
 * object (a single S3 GET), cut at the stored byte ranges.
 */
export async function readMessageContent(
  message: Pick<
    DeliveryMessage,
    'message_uuid' | 'content' | 'attachments' | 'account_id' | 'created_at' | 'recipients'
  >,
): Promise<MessageBodies> {
  const content = message.content;
  if (content.store !== 's3') {
    const bodies = (await table.get(contentKeyOf(message), { ConsistentRead: true })) as
      | (ContentBodies & { pk: string })
      | undefined;
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
