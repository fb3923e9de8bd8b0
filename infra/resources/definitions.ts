/**
 * Definitions of the table, queues and bucket, shared by the CDK stack and the local host's
 * provisioning so that both create the same shapes. Data only.
 */
export const tableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB TTL removes idempotency records and expired data. */
  ttlAttribute: 'expires_at',
  indexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
    { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
    // Sparse: only suppression items carry these attributes (docs/data-model.md).
    { name: 'suppressions', partitionKey: 'suppressions_pk', sortKey: 'suppressions_sk' },
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
