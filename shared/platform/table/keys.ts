import { createHash } from 'node:crypto';
import { type Searchable, termDigest, termsOf } from '../../messages/model/terms.ts';

/**
 * Key layout of the single DynamoDB table (see docs/data-model.md). Every item has `pk` and `sk`;
 * the indexes use `gsi1pk/gsi1sk` (an account's domains), `gsi2pk/gsi1sk` (an account's messages
 * by listing lane, newest first) and `gsi3pk/gsi3sk` (the dispatcher's work: watch entries of
 * messages that went in flight, due entries of held ones); the sparse `suppressions` index uses
 * `suppressions_pk/suppressions_sk` (an account's suppression list, by reason, newest first),
 * carried only by suppression items. A message is on exactly one listing lane at a time, so an
 * unfiltered listing merges every lane (the message writes no listing-only index entry). The
 * common path (queued → processing → sent → delivered) never leaves the `accepted` lane, and its
 * watch entry is written once and left behind when the message settles: the lifecycle writes gsi2
 * once and gsi3 once. No partition key is written by every message: per-account message keys are
 * spread over `shardCount.account` shards by the message uuid, and the work index over
 * `shardCount.work` shards by the uuid (docs/data-model.md, "Scale"). Search entries (`TERM#…`)
 * are table items of their own, one per recipient, tag and metadata pair of a message, spread over
 * the same account shards.
 */

export const shardCount = { account: 4, work: 32 } as const;

/** Writer slots of an account's domain and tag counters (`keys.stats`), read in parallel when grouped. */
export const statsWriters = 4;

/** The writer slot of a stream shard's counter rows. */
export const statsWriterOf = (streamShard: string): number => stableHash(streamShard) % statsWriters;

/** FNV-1a, 32 bits: a stable, well-spread hash of a key (not a security function). */
export function stableHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The account shard (0 … shardCount.account − 1) of a message: fixed by its uuid for its whole life. */
export const accountShardOf = (messageUuid: string): number => stableHash(messageUuid) % shardCount.account;

/**
 * Work shard of a message's entries on the work index (its due entry while held, its watch entry
 * once in flight): spread by uuid over the service, whatever the account.
 */
export const workShardOf = (messageUuid: string): number => stableHash(messageUuid) % shardCount.work;

/**
 * The work shard of the in-flight index of earlier releases (`INFLIGHT#<n>`), which the dispatcher
 * drains into watch entries (docs/decisions.md, "Listing lanes and watch entries").
 */
export const legacyInFlightShardOf = (accountId: string, accountShard: number): number =>
  (stableHash(accountId) + accountShard) % shardCount.work;

export const keys = {
  account: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: 'ACCOUNT' }),
  /**
   * An account's message budget for batches (docs/decisions.md, "Rate limit"): one small item, one
   * conditional write per batch request (never per message), shared by every function instance.
   */
  messageBudget: (accountId: string) => ({ pk: `RATE#${accountId}`, sk: 'RATE' }),
  /** A random key of the deployment, created on first use (e.g. `feedback-id`, docs/deliverability.md). */
  serviceKey: (name: string) => ({ pk: `SERVICE_KEY#${name}`, sk: 'KEY' }),
  domain: (domain: string) => ({ pk: `DOMAIN#${domain}`, sk: 'DOMAIN' }),
  domainsOfAccount: (accountId: string) => `ACCOUNT_DOMAINS#${accountId}`,
  dkimKey: (domain: string, selector: string) => ({ pk: `DOMAIN#${domain}`, sk: `DKIM#${selector}` }),
  message: (messageUuid: string) => ({ pk: `MESSAGE#${messageUuid}`, sk: 'MESSAGE' }),
  /** gsi2: an account's messages in one listing lane (`laneOf`), per account shard. */
  messagesOfAccountByLane: (accountId: string, lane: string, shard: number) =>
    `STATUS#${accountId}#${lane}#${shard}`,
  /**
   * A search entry's partition: one account's messages carrying one term (a recipient, a tag pair
   * or a metadata pair, by its digest), per account shard. Sort key `<created_at>#<uuid>`.
   */
  searchTerm: (accountId: string, digest: string, shard: number) => `TERM#${accountId}#${digest}#${shard}`,
  /**
   * gsi3: watch entries, written when a message goes in flight (`queued`) and left when it settles;
   * sort key `<watch_at>#<uuid>`, when the dispatcher looks at the message (docs/data-model.md).
   */
  watch: (workShard: number) => `WATCH#${workShard}`,
  /** gsi3 of earlier releases: in-flight messages, sort key `<account>#<created_at>#<uuid>` (drained). */
  legacyInFlight: (workShard: number) => `INFLIGHT#${workShard}`,
  /** The dispatcher's mark of one watch shard: up to when its entries were processed. */
  dispatchMark: (workShard: number) => ({ pk: 'DISPATCH_MARK', sk: `WATCH#${workShard}` }),
  dispatchMarks: 'DISPATCH_MARK',
  /** gsi3: held messages by due time (scheduled: send time; waiting: hold end); sort key `<due>#<uuid>`. */
  due: (workShard: number) => `DUE#${workShard}`,
  /**
   * The client's key is hashed (SHA-256, base64url): it may contain `#`, and account `a` with key
   * `b#c` must never share a record with account `a#b` and key `c`. The record also stores its
   * account, and a replay checks it.
   */
  idempotency: (accountId: string, key: string) => ({
    pk: `IDEMPOTENCY#${accountId}#${createHash('sha256').update(key).digest('base64url')}`,
    sk: 'IDEMPOTENCY',
  }),
  /**
   * One suppressed address of one account. The partition is the address (so lookups and imports
   * spread over partitions), the sort key the account: neither part can spill into the other.
   */
  suppression: (accountId: string, email: string) => ({
    pk: `SUPPRESSION#${email}`,
    sk: `ACCOUNT#${accountId}`,
  }),
  /** Partition of the `suppressions` index: one account's list. */
  suppressionsOfAccount: (accountId: string) => `ACCOUNT_SUPPRESSIONS#${accountId}`,
  /**
   * The account-wide counter rows of an account (docs/stats.md): one partition, written once per
   * stream batch and day (never per message), read by a stats query with one Query.
   */
  statsOfAccount: (accountId: string) => `STATS#${accountId}`,
  /**
   * The counter rows of an account's sending domains and tags, which a batch writes as many of as
   * it meets domains and tags (up to 11 per message): spread over `statsWriters` partitions by the
   * stream shard that counts.
   */
  stats: (accountId: string, writer: number) => `STATS#${accountId}#${writer}`,
  /**
   * A counter row: one dimension (`all`, `domain`, `tag`) on one day of the server's time zone,
   * as one stream shard counted it. Kind and date first: one Query reads a range of days of every
   * value of a dimension.
   */
  statsRow: (kind: string, date: string, value: string, streamShard: string) =>
    `${kind}#${date}#${value}#${streamShard}`,
  /**
   * A week row of counts by day (`<kind>` as in `statsRow`, `monday` = the date of the week's
   * Monday): the daily series.
   */
  statsWeekRow: (kind: string, monday: string, value: string, streamShard: string) =>
    `w#${kind}#${monday}#${value}#${streamShard}`,
  /** Sort key of the `suppressions` index: reason, then UTC creation time, then the address. */
  suppressionsSortKey: (reason: string, createdAt: string, email: string) =>
    `${reason}#${createdAt}#${email}`,
  /** A received message, for one receiving recipient (docs/data-model.md, "Inbound"). */
  inbound: (inboundUuid: string) => ({ pk: `INBOUND#${inboundUuid}`, sk: 'INBOUND' }),
  /** gsi2: an account's received mail, per account shard. */
  inboundOfAccount: (accountId: string, shard: number) => `INBOUND#${accountId}#${shard}`,
  /** gsi1: an account's received mail for one recipient address, per account shard. */
  inboundToRecipient: (accountId: string, recipient: string, shard: number) =>
    `INBOUND_TO#${accountId}#${recipient}#${shard}`,
  /** gsi3: an account's received mail from one sender address, per account shard. */
  inboundFromSender: (accountId: string, sender: string, shard: number) =>
    `INBOUND_FROM#${accountId}#${sender}#${shard}`,
  /**
   * The id Amazon SES gave a message it sent (its Message-ID is `<id@…amazonses.com>`), naming the
   * account and message uuid, so a reply referencing SES's id is threaded (docs/inbound.md).
   */
  sesMessageId: (sesMessageId: string) => ({ pk: `SES_MESSAGE#${sesMessageId}`, sk: 'SES_MESSAGE' }),
} as const;

/**
 * The index attributes of a received message, written once with the item (it never changes):
 * its account's list (gsi2), its recipient's (gsi1) and its sender's (gsi3), each spread over the
 * account shards by the uuid, and all sorted by `<received_at>#<uuid>` (gsi1sk, which gsi2 shares).
 */
export function inboundIndexAttributes(item: {
  inbound_uuid: string;
  account_id: string;
  received_at: string;
  recipient: string;
  sender?: string;
}): Record<string, string> {
  const shard = accountShardOf(item.inbound_uuid);
  const sortKey = `${item.received_at}#${item.inbound_uuid}`;
  return {
    gsi1sk: sortKey,
    gsi1pk: keys.inboundToRecipient(item.account_id, item.recipient.toLowerCase(), shard),
    gsi2pk: keys.inboundOfAccount(item.account_id, shard),
    ...(item.sender === undefined
      ? {}
      : {
          gsi3pk: keys.inboundFromSender(item.account_id, item.sender.toLowerCase(), shard),
          gsi3sk: sortKey,
        }),
  };
}

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
 * (docs/decisions.md, "Tags, metadata, search and batch"). Fixed by the message for its whole
 * life: its account, creation time, uuid and first recipient never change.
 */
export function contentKeyOf(message: SearchableMessage): { pk: string; sk: string } {
  const [first] = searchEntriesOf(message);
  if (first === undefined) throw new Error('a message has at least one recipient');
  return first;
}
