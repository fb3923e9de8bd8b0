import { accountShardOf, keys, workShardOf } from '../../platform/table/keys.ts';
import { type Searchable, termDigest, termsOf } from '../model/terms.ts';

/** Statuses during which the dispatcher watches a message (its watch entry on gsi3 is live). */
export const inFlightStatuses = ['queued', 'processing'] as const;
export const isInFlight = (status: string): boolean =>
  (inFlightStatuses as readonly string[]).includes(status);

/** Held statuses: on a due entry of gsi3 (scheduled: the send time; waiting: the hold's end). */
const heldStatuses = ['scheduled', 'waiting'] as const;
const isHeld = (status: string): boolean => (heldStatuses as readonly string[]).includes(status);

/**
 * The listing lane of the statuses a message passes through when all goes well, from add to its
 * recipients' servers: a message stays on it from add to `delivered`, so the common path (and SES's
 * sent → delivered) never moves its gsi2 entry.
 */
export const acceptedLane = 'accepted';
export const acceptedLaneStatuses = ['queued', 'processing', 'sent', 'delivered'] as const;

/** A message's listing lane (its gsi2 partition): `accepted` for the common path, else its status. */
export const laneOf = (status: string): string =>
  (acceptedLaneStatuses as readonly string[]).includes(status) ? acceptedLane : status;

/** The statuses listed on a lane. */
export const statusesOfLane = (lane: string, statuses: readonly string[]): string[] =>
  statuses.filter((status) => laneOf(status) === lane);

/** What the index attributes of a message are computed from. */
export interface IndexedMessage {
  message_uuid: string;
  account_id: string;
  created_at: string;
  status: string;
  /** For `scheduled`: the send time (UTC ISO), the due entry's sort key. */
  send_at?: string;
  /** For `waiting`: the end of the hold (UTC ISO), when the dispatcher fails it; the due entry's sort key. */
  due_at?: string;
  /**
   * For a message going in flight (`queued`, `processing`): when the dispatcher first looks at it
   * (UTC ISO, `firstWatchAt`), the watch entry's sort key.
   */
  watch_at?: string;
}

export interface MessageIndexAttributes {
  /** The sort key of every message index entry (gsi2's sort key attribute; the merge key). */
  gsi1sk: string;
  gsi2pk: string;
  gsi3pk?: string;
  gsi3sk?: string;
}

/** The watch entry of a message: `WATCH#<work shard>`, sorted by when the dispatcher looks at it. */
export function watchEntryOf(messageUuid: string, watchAt: string): { gsi3pk: string; gsi3sk: string } {
  return { gsi3pk: keys.watch(workShardOf(messageUuid)), gsi3sk: `${watchAt}#${messageUuid}` };
}

/** The work-index entry a status has of its own: a watch entry in flight, a due entry while held. */
function workEntryOf(message: IndexedMessage): { gsi3pk: string; gsi3sk: string } | undefined {
  if (isInFlight(message.status)) {
    if (message.watch_at === undefined)
      throw new Error(`a ${message.status} message needs its watch time (message ${message.message_uuid})`);
    return watchEntryOf(message.message_uuid, message.watch_at);
  }
  // Held messages wait on the due shards for a time: `scheduled` for its send time, `waiting` for
  // the end of the longest hold.
  const dueTime =
    message.status === 'scheduled'
      ? message.send_at
      : message.status === 'waiting'
        ? message.due_at
        : undefined;
  return dueTime === undefined
    ? undefined
    : { gsi3pk: keys.due(workShardOf(message.message_uuid)), gsi3sk: `${dueTime}#${message.message_uuid}` };
}

/**
 * The single source of a message's index attributes, for every status, as a new item carries them:
 * the repositories, the test helpers and the benchmark all build them here, and
 * test/unit/partition-keys.test.ts checks that none of them is a key shared by every message.
 */
export function messageIndexAttributes(message: IndexedMessage): MessageIndexAttributes {
  const shard = accountShardOf(message.message_uuid);
  const attributes: MessageIndexAttributes = {
    gsi1sk: `${message.created_at}#${message.message_uuid}`,
    gsi2pk: keys.messagesOfAccountByLane(message.account_id, laneOf(message.status), shard),
  };
  const work = workEntryOf(message);
  return work === undefined ? attributes : { ...attributes, ...work };
}

/**
 * The index attributes a status change writes (`from`: the statuses the message may be in), and
 * only those: gsi2 when the lane changes; gsi3 when the message goes in flight from a held status or
 * none (a watch entry), or is held (a due entry). A due entry is removed when the message leaves
 * its held status otherwise (the dispatcher reads the due shards from their start every run). A
 * watch entry is never removed: when the message settles the dispatcher passes over it, which costs
 * less than a removal, and a change between in-flight statuses (the sender's claim) keeps it. So
 * queued → processing → sent → delivered writes nothing to any index.
 */
export function indexChangeFor(
  message: IndexedMessage,
  from: readonly string[],
): { set: Record<string, string>; remove: string[] } {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  const lane = laneOf(message.status);
  if (from.some((status) => laneOf(status) !== lane))
    set.gsi2pk = keys.messagesOfAccountByLane(message.account_id, lane, accountShardOf(message.message_uuid));
  const stays = isInFlight(message.status) && from.every(isInFlight);
  const work = stays ? undefined : workEntryOf(message);
  if (work !== undefined) Object.assign(set, work);
  else if (!stays && from.some(isHeld)) remove.push('gsi3pk', 'gsi3sk');
  return { set, remove };
}

/** What a message's search entries are computed from. */
export interface SearchableMessage extends Searchable {
  message_uuid: string;
  account_id: string;
  created_at: string;
}

/**
 * The keys of a message's search entries, one per distinct term (docs/data-model.md, "Search
 * entries"): the single source for add, batch, delete, the sender and the benchmark. An entry holds
 * its keys only (one write unit), is written once before its message and deleted with it. The
 * first is always the first recipient's (`termsOf` lists recipients first, and a message has one).
 */
export function searchEntriesOf(message: SearchableMessage): Array<{ pk: string; sk: string }> {
  const shard = accountShardOf(message.message_uuid);
  const sk = `${message.created_at}#${message.message_uuid}`;
  return termsOf(message).map((term) => ({
    pk: keys.searchTerm(message.account_id, termDigest(term), shard),
    sk,
  }));
}

/**
 * Where a message's content item is: at its first search entry's key (its first recipient's), so
 * that the one write that stores its small bodies also files it under that recipient, and a
 * two-recipient message pays one write unit for its search entries instead of two
 * (docs/decisions/0034-tags-metadata-search.md). Fixed by the message for its whole
 * life: its account, creation time, uuid and first recipient never change.
 */
export function contentKeyOf(message: SearchableMessage): { pk: string; sk: string } {
  const [first] = searchEntriesOf(message);
  if (first === undefined) throw new Error('a message has at least one recipient');
  return first;
}
