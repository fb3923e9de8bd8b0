import { createHash } from 'node:crypto';

/**
 * Key layout of the single DynamoDB table (see docs/data-model.md). Every item has `pk` and `sk`;
 * the indexes use `gsi1pk/gsi1sk` (an account's domains), `gsi2pk/gsi1sk` (an account's messages
 * by status, newest first; sparse: not while in flight) and `gsi3pk/gsi3sk` (the dispatcher's
 * work, and an account's in-flight messages: `queued` and `processing`); the sparse `suppressions`
 * index uses `suppressions_pk/suppressions_sk` (an account's suppression list, by reason, newest
 * first), carried only by suppression items. A message is on exactly one status partition at a
 * time, gsi2 or the in-flight part of gsi3, so an unfiltered listing merges every status (the
 * message writes no listing-only index entry: one write unit less per message). No partition key
 * is written by every message: per-account message keys are spread over `shardCount.account`
 * shards by the message uuid, and the work index over `shardCount.work` shards
 * (docs/data-model.md, "Scale").
 */

export const shardCount = { account: 4, work: 32 } as const;

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

/** Work shard of a scheduled message's due entry: spread by uuid over the service. */
export const dueShardOf = (messageUuid: string): number => stableHash(messageUuid) % shardCount.work;

/**
 * Work shard of an in-flight message: the account's 4 shards sit side by side from a place chosen
 * by the account's hash, so one account spreads over `shardCount.account` work shards (its queries
 * fan out over those only) and the accounts spread over all of them.
 */
export const inFlightShardOf = (accountId: string, accountShard: number): number =>
  (stableHash(accountId) + accountShard) % shardCount.work;

export const keys = {
  account: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: 'ACCOUNT' }),
  domain: (domain: string) => ({ pk: `DOMAIN#${domain}`, sk: 'DOMAIN' }),
  domainsOfAccount: (accountId: string) => `ACCOUNT_DOMAINS#${accountId}`,
  dkimKey: (domain: string, selector: string) => ({ pk: `DOMAIN#${domain}`, sk: `DKIM#${selector}` }),
  message: (messageUuid: string) => ({ pk: `MESSAGE#${messageUuid}`, sk: 'MESSAGE' }),
  /** A small message's bodies, beside its item (never on an index). */
  messageContent: (messageUuid: string) => ({ pk: `MESSAGE#${messageUuid}`, sk: 'CONTENT' }),
  /** gsi2: an account's messages in one status (never `queued` or `processing`), per account shard. */
  messagesOfAccountByStatus: (accountId: string, status: string, shard: number) =>
    `STATUS#${accountId}#${status}#${shard}`,
  /** gsi3: in-flight (`queued`, `processing`) messages; sort key `<account>#<created_at>#<uuid>`. */
  inFlight: (workShard: number) => `INFLIGHT#${workShard}`,
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

/** Statuses during which a message lives on the work index instead of the status index. */
export const inFlightStatuses = ['queued', 'processing'] as const;
export const isInFlight = (status: string): boolean =>
  (inFlightStatuses as readonly string[]).includes(status);

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
}

export interface MessageIndexAttributes {
  /** The sort key of every message index entry (gsi2's sort key attribute; the merge key). */
  gsi1sk: string;
  gsi2pk?: string;
  gsi3pk?: string;
  gsi3sk?: string;
}

/**
 * The single source of a message's index attributes, for every status: the repositories, the
 * test helpers and the benchmark all build them here, and test/unit/partition-keys.test.ts checks
 * that none of them is a key shared by every message.
 */
export function messageIndexAttributes(message: IndexedMessage): MessageIndexAttributes {
  const shard = accountShardOf(message.message_uuid);
  const sortKey = `${message.created_at}#${message.message_uuid}`;
  const attributes: MessageIndexAttributes = { gsi1sk: sortKey };
  if (isInFlight(message.status)) {
    attributes.gsi3pk = keys.inFlight(inFlightShardOf(message.account_id, shard));
    attributes.gsi3sk = `${message.account_id}#${sortKey}`;
    return attributes;
  }
  attributes.gsi2pk = keys.messagesOfAccountByStatus(message.account_id, message.status, shard);
  // Held messages wait on the due shards for a time: `scheduled` for its send time, `waiting` for
  // the end of the longest hold.
  const dueTime =
    message.status === 'scheduled'
      ? message.send_at
      : message.status === 'waiting'
        ? message.due_at
        : undefined;
  if (dueTime !== undefined) {
    attributes.gsi3pk = keys.due(dueShardOf(message.message_uuid));
    attributes.gsi3sk = `${dueTime}#${message.message_uuid}`;
  }
  return attributes;
}

/**
 * The index attributes a status change writes: SET for those the new status has, REMOVE for those
 * it has not. A change between two in-flight statuses (the sender's claim) touches no index, and
 * the sort key never changes after creation, so those updates write nothing to any index.
 */
export function indexChangeFor(
  message: IndexedMessage,
  from: readonly string[],
): { set: Record<string, string>; remove: string[] } {
  if (isInFlight(message.status) && from.every(isInFlight)) return { set: {}, remove: [] };
  const { gsi1sk: _gsi1sk, ...target } = messageIndexAttributes(message);
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const name of ['gsi2pk', 'gsi3pk', 'gsi3sk'] as const) {
    const value = target[name];
    if (value === undefined) remove.push(name);
    else set[name] = value;
  }
  return { set, remove };
}
