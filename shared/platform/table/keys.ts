import { createHash } from 'node:crypto';

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

export const shardCount = { account: 4, work: 32, domainChecks: 8 } as const;

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
 * drains into watch entries (docs/decisions/0020-watch-entries.md).
 */
export const legacyInFlightShardOf = (accountId: string, accountShard: number): number =>
  (stableHash(accountId) + accountShard) % shardCount.work;

export const keys = {
  account: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: 'ACCOUNT' }),
  /**
   * An account's message budget for batches (docs/decisions/0005-account-message-budget.md): one small item, one
   * conditional write per batch request (never per message), shared by every function instance.
   */
  messageBudget: (accountId: string) => ({ pk: `RATE#${accountId}`, sk: 'RATE' }),
  /** A random key of the deployment, created on first use (e.g. `feedback-id`, docs/deliverability.md). */
  serviceKey: (name: string) => ({ pk: `SERVICE_KEY#${name}`, sk: 'KEY' }),
  domain: (domain: string) => ({ pk: `DOMAIN#${domain}`, sk: 'DOMAIN' }),
  domainsOfAccount: (accountId: string) => `ACCOUNT_DOMAINS#${accountId}`,
  /**
   * gsi3: domains due for a background DNS check (docs/domains.md), spread by name over
   * `shardCount.domainChecks` shards; sort key `<next_check_at>#<domain>`.
   */
  domainChecks: (shard: number) => `DOMAIN_CHECK#${shard}`,
  /** A pending claim of a domain by another account, with the claimant's own DKIM key. */
  domainClaim: (domain: string, accountId: string) => ({ pk: `DOMAIN#${domain}`, sk: `CLAIM#${accountId}` }),
  dkimKey: (domain: string, selector: string) => ({ pk: `DOMAIN#${domain}`, sk: `DKIM#${selector}` }),
  /** The pool of RSA-2048 DKIM key pairs made ahead for domain add (docs/domains.md, "Key pool"). */
  dkimKeyPool: 'DKIM_POOL',
  dkimPoolKey: (id: string) => ({ pk: 'DKIM_POOL', sk: `KEY#${id}` }),
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
  /**
   * One address an account suppresses for its broadcast stream only (an unsubscribe, docs/streams.md):
   * beside the entry for every stream, so a later bounce still suppresses everything. A prefix of its
   * own, so no address can make one key look like the other.
   */
  broadcastSuppression: (accountId: string, email: string) => ({
    pk: `SUPPRESSION_BROADCAST#${email}`,
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
  /** An API key, found by its id alone (docs/apikeys.md): the one GetItem of a key check. */
  apiKey: (keyId: string) => ({ pk: `APIKEY#${keyId}`, sk: 'APIKEY' }),
  /** gsi1: an account's API keys; sort key `<created_at>#<key_id>`. */
  apiKeysOfAccount: (accountId: string) => `ACCOUNT_APIKEYS#${accountId}`,
} as const;
