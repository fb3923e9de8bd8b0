/**
 * Definitions of the table, queues and bucket, shared by the CDK stack and the local host's
 * provisioning so that both create the same shapes. Data only.
 */
export const tableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB TTL removes idempotency records and expired data. */
  ttlAttribute: 'expires_at',
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
} as const;

export const bucketDefinition = {
  messagePrefix: 'messages/',
  avatarPrefix: 'avatars/',
} as const;

export const localNames = {
  table: 'svc-mail',
  queue: 'svc-mail-send',
  deadLetterQueue: 'svc-mail-send-dlq',
  bucket: 'svc-mail-objects',
} as const;
