/**
 * Definitions of the table, queues and bucket, shared by the CDK stack and the local host's
 * provisioning so that both create the same shapes. Data only.
 */
export const tableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB TTL removes idempotency records and expired data. */
  ttlAttribute: 'expires_at',
  /** The table's stream: the outbox of webhook events (docs/webhooks.md). */
  streamViewType: 'NEW_AND_OLD_IMAGES',
  /**
   * Projections carry only what the queries read (docs/data-model.md): message queries read index
   * keys and then the page's items, so an update that changes no index key writes nothing to an
   * index. gsi1 also includes the never-changing attributes an account's domain list needs.
   * gsi2 sorts by gsi1's sort key attribute (creation time), so the item stores it once.
   */
  indexes: [
    {
      name: 'gsi1',
      partitionKey: 'gsi1pk',
      sortKey: 'gsi1sk',
      projection: 'INCLUDE',
      nonKeyAttributes: ['domain', 'account_id', 'created_at', 'active_selector'],
    },
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi1sk', projection: 'KEYS_ONLY' },
    { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: 'KEYS_ONLY' },
    // Sparse: only suppression items carry these attributes (docs/data-model.md). Written on a
    // bounce or complaint, not on every message; the list query reads whole entries from it.
    {
      name: 'suppressions',
      partitionKey: 'suppressions_pk',
      sortKey: 'suppressions_sk',
      projection: 'ALL',
    },
  ],
} as const;

export const queueDefinition = {
  /** Lambda's event source needs visibility ≥ 6 × the sender's timeout. */
  senderTimeoutSeconds: 30,
  visibilityTimeoutSeconds: 180,
  /** After this many receives a message moves to the dead-letter queue. */
  maxReceiveCount: 5,
  retentionSeconds: 4 * 24 * 3600,
  deadLetterRetentionSeconds: 14 * 24 * 3600,
  batchSize: 10,
  /** The sender's event source mapping: at most this many invocations at once (SES's sending rate); context senderConcurrency. */
  maxConcurrency: 5,
  /** The local event-source loop: invocations at once, one kept for accounts with none running. */
  localConcurrency: 3,
} as const;

/** The webhook queue (one job per event and endpoint and attempt) and its dead-letter queue. */
export const webhookQueueDefinition = {
  /** One attempt waits at most 15 s for an answer; a batch runs its jobs concurrently. */
  deliveryTimeoutSeconds: 30,
  /** Lambda's event source needs visibility ≥ 6 × the consumer's timeout. */
  visibilityTimeoutSeconds: 180,
  /** A job whose processing crashed this often moves to the dead-letter queue (and stays replayable). */
  maxReceiveCount: 5,
  retentionSeconds: 4 * 24 * 3600,
  deadLetterRetentionSeconds: 14 * 24 * 3600,
  batchSize: 10,
  /** The local event-source loop: invocations at once, one kept for accounts with none running. */
  localConcurrency: 4,
} as const;

/** The table stream → webhook-fanout mapping (on AWS the Lambda event source mapping). */
export const tableStreamDefinition = {
  batchSize: 100,
  maxBatchingWindowSeconds: 0,
  /** Retries of a failing batch (halved each time: bisect) before its records go to the failure queue. */
  retryAttempts: 10,
  maxRecordAgeHours: 24,
  fanoutTimeoutSeconds: 60,
} as const;

/**
 * The table stream → stats-counter mapping (docs/stats.md). A tumbling window makes Lambda name the
 * stream shard in each event (the consumer's exactness rests on it); its state is not used, so the
 * longest window means the fewest end-of-window invocations. Batches are gathered for a few seconds,
 * so that a batch writes each counter row once for as many messages as possible. A failing batch is
 * retried until it succeeds or the stream drops it (24 h): skipping records would make the counts
 * wrong, and the records are what the counts are made of.
 */
export const countingStreamDefinition = {
  batchSize: 1000,
  maxBatchingWindowSeconds: 5,
  tumblingWindowSeconds: 900,
  timeoutSeconds: 60,
} as const;

/**
 * The inbound queue: one SES receipt notification per received message (the receipt rule's S3
 * action publishes it to an SNS topic once the message is stored; raw delivery to this queue). The
 * inbound function parses one message at a time (up to 40 MB), so its timeout is long and the
 * visibility is six times it, as Lambda's event source requires.
 */
export const inboundQueueDefinition = {
  functionTimeoutSeconds: 120,
  visibilityTimeoutSeconds: 720,
  maxReceiveCount: 5,
  retentionSeconds: 4 * 24 * 3600,
  deadLetterRetentionSeconds: 14 * 24 * 3600,
  batchSize: 5,
} as const;

export const bucketDefinition = {
  messagePrefix: 'messages/',
  avatarPrefix: 'avatars/',
  /**
   * Received mail: `inbound/raw/<SES message id>` (written by SES's S3 action, or the local host's
   * inbound mail server) and `inbound/parsed/<SES message id>/…` (written by the inbound function).
   */
  inboundPrefix: 'inbound/',
  inboundRawPrefix: 'inbound/raw/',
} as const;

export const localNames = {
  table: 'svc-mail',
  queue: 'svc-mail-send',
  deadLetterQueue: 'svc-mail-send-dlq',
  bucket: 'svc-mail-objects',
  webhookQueue: 'svc-mail-webhooks',
  webhookDeadLetterQueue: 'svc-mail-webhooks-dlq',
  inboundQueue: 'svc-mail-inbound',
  inboundDeadLetterQueue: 'svc-mail-inbound-dlq',
} as const;
