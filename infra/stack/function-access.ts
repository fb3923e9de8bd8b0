import type { RouteId } from '../../shared/routes.ts';
import type { workers } from '../../shared/workers.ts';

/**
 * What each function may touch, in one place. The stack turns every entry into environment
 * variables plus IAM statements through the grant helpers of `ServiceFunction`, so a function
 * that is not listed here for something can neither find it nor reach it.
 *
 * - table: `read` (GetItem, BatchGetItem, Query on the table and its indexes), `write` (read plus
 *   PutItem, UpdateItem, ConditionCheckItem), `delete` (read plus DeleteItem; no Put or Update),
 *   `write-batch` (write plus BatchWriteItem: IAM cannot limit BatchWriteItem to puts, so only the
 *   batch route, whose code only puts new items, has it), `settle-counters` (read plus UpdateItem and
 *   DeleteItem of counter rows only: a condition on the items' leading key).
 *   Every authenticated function reads the table: the chain checks that the caller's account is
 *   active.
 * - queue: `send` (SendMessage on the send queue). Consuming a queue comes from the worker's
 *   trigger (event source mapping), not from here.
 * - objects: per key prefix of the bucket, `read` (GetObject; also what a presigned GET needs,
 *   plus ListBucket so that a missing key is a 404), `write` (PutObject), `delete` (DeleteObject).
 * - dkimKey: `encrypt` (GenerateDataKey, Encrypt) or `decrypt` (Decrypt) with the DKIM KMS key.
 * - webhookQueue / webhookDeadLetterQueue: `send` (SendMessage) on the webhook queue or its DLQ.
 * - webhookSecrets: `encrypt` or `decrypt` with the key-wrapping KMS key, only for ciphertexts whose
 *   encryption context says `purpose = svc-mail-webhook-secret` (a condition in the statement).
 * - mail: sends through SES with the configuration set.
 * - composes: knows which relay the sender uses (MAIL_TRANSPORT), to compose as it would.
 * - avatars: reads the avatar settings (Gravatar base URL, cache lifetime).
 */
export type TableAccess = 'read' | 'write' | 'delete' | 'write-delete' | 'write-batch' | 'settle-counters';
export type ObjectAccess = 'read' | 'write' | 'delete';
export type ObjectPrefix = 'messages/' | 'avatars/' | 'housekeeping/' | 'templates/' | 'inbound/';

export interface AccessNeeds {
  readonly table?: TableAccess;
  readonly queue?: 'send';
  readonly objects?: Partial<Record<ObjectPrefix, readonly ObjectAccess[]>>;
  readonly dkimKey?: 'encrypt' | 'decrypt';
  readonly webhookQueue?: 'send';
  readonly webhookDeadLetterQueue?: 'send';
  readonly webhookSecrets?: 'encrypt' | 'decrypt';
  readonly mail?: true;
  /** Composes messages as the sender does, without sending: the relay's name (MAIL_TRANSPORT). */
  readonly composes?: true;
  readonly avatars?: true;
}

export type WorkerId = (typeof workers)[number]['id'];
export type FunctionId = RouteId | WorkerId;

export const functionAccess = {
  // Public routes: nothing to touch.
  health: {},
  'keepalive-status': {},
  openapi: {},
  // Avatar housekeeping: lists and removes expired cache entries, only under avatars/, and keeps
  // its resume cursor under housekeeping/ (docs/avatars.md).
  'keepalive-run': {
    table: 'read',
    objects: { 'avatars/': ['read', 'delete'], 'housekeeping/': ['read', 'write'] },
    avatars: true,
  },
  // Stores the bodies, writes the message and queues it (or releases / cancels a held one); reads
  // the parts of the template a message is rendered from.
  'message-add': {
    table: 'write',
    queue: 'send',
    objects: { 'messages/': ['write'], 'templates/': ['read'] },
  },
  // The same for up to 500 messages at once, with BatchWriteItem and SendMessageBatch; reads the
  // parts of the templates its messages are rendered from; charges the account's message budget
  // (one UpdateItem of `RATE#<account>` per batch, docs/decisions.md "Rate limit").
  'message-batch': {
    table: 'write-batch',
    queue: 'send',
    objects: { 'messages/': ['write'], 'templates/': ['read'] },
  },
  // Reads only.
  'message-query': { table: 'read' },
  // Rebuilds a message as sent (its bodies, the DKIM keys that signed it), stores the signed message
  // and its attachments under messages/<uuid>/download/ and presigns them; records their number on
  // the item, so that deleting the message removes them.
  'message-content': {
    table: 'write',
    objects: { 'messages/': ['read', 'write'] },
    dkimKey: 'decrypt',
    composes: true,
  },
  // The only function that deletes messages and their objects.
  'message-delete': { table: 'delete', objects: { 'messages/': ['delete'] } },
  // Reads keys and does DNS lookups; never sees private keys.
  'dkim-status': { table: 'read' },
  // Creates a key pair and stores the private key encrypted with the KMS key.
  'dkim-set-algorithm': { table: 'write', dkimKey: 'encrypt' },
  // Cache in S3 under avatars/, returns presigned GET URLs.
  'avatar-get': { table: 'read', objects: { 'avatars/': ['read', 'write'] }, avatars: true },
  // The caller's suppression list: read; add (conditional puts, no deletes); delete (no puts).
  'suppression-query': { table: 'read' },
  'suppression-add': { table: 'write' },
  'suppression-delete': { table: 'delete' },
  // Claims, composes from the stored bodies, DKIM-signs (decrypts the key) and sends.
  sender: { table: 'write', objects: { 'messages/': ['read'] }, dkimKey: 'decrypt', mail: true },
  // Marks messages the queue gave up on as failed.
  'dead-letter': { table: 'write' },
  // Moves due scheduled messages to the queue; re-queues stranded ones.
  dispatcher: { table: 'write', queue: 'send' },
  // Records delivery, bounce and complaint events per recipient.
  'delivery-events': { table: 'write' },
  // Webhooks (docs/webhooks.md): endpoints with their secret encrypted under the wrapping key.
  'webhook-add': { table: 'write', webhookSecrets: 'encrypt' },
  'webhook-query': { table: 'read' },
  // Deletes the endpoint and decrements the account's counter in one transaction.
  'webhook-delete': { table: 'write-delete' },
  'webhook-rotate-secret': { table: 'write', webhookSecrets: 'encrypt' },
  'webhook-replay': { table: 'read', webhookQueue: 'send' },
  // Reads counter rows (statistics), never a message; settles the rows stream shards no longer
  // write (updates and deletes limited to counter rows' keys).
  'stats-query': { table: 'settle-counters' },
  // Adds each stream batch's counts to the counter rows (the stream itself comes from the trigger).
  'stats-counter': { table: 'write' },
  // Reads endpoints, stores events, queues one job per endpoint (the stream itself comes from the trigger).
  'webhook-fanout': { table: 'write', webhookQueue: 'send' },
  // Decrypts secrets, records attempts, disables endpoints on 410, queues retries, dead-letters the last.
  'webhook-delivery': {
    table: 'write',
    webhookSecrets: 'decrypt',
    webhookQueue: 'send',
    webhookDeadLetterQueue: 'send',
  },
  // Templates (docs/templates.md): records and counter in the table, each version's parts under
  // templates/. Add and update write parts (and remove those of a write that lost a race or of a
  // version removed at the limit); delete removes records and parts; query and render only read.
  'template-add': { table: 'write', objects: { 'templates/': ['write', 'delete'] } },
  'template-update': { table: 'write-delete', objects: { 'templates/': ['read', 'write', 'delete'] } },
  'template-publish': { table: 'write' },
  'template-query': { table: 'read', objects: { 'templates/': ['read'] } },
  'template-delete': { table: 'write-delete', objects: { 'templates/': ['delete'] } },
  'template-render': { table: 'read', objects: { 'templates/': ['read'] } },
  // Inbound (docs/inbound.md): reads the raw message SES stored and writes what it parsed, all
  // under inbound/; reads domains (receiving, owner) and sent messages (threading); writes items.
  inbound: { table: 'write', objects: { 'inbound/': ['read', 'write'] } },
  // Presigned GETs of the raw message and attachments, and the content object.
  'inbound-query': { table: 'read', objects: { 'inbound/': ['read'] } },
  // The only function that deletes received mail and its objects.
  'inbound-delete': { table: 'delete', objects: { 'inbound/': ['delete'] } },
} as const satisfies Record<FunctionId, AccessNeeds>;

/** What a user loses when a worker stops working (for alarm descriptions). */
export const workerImpact: Record<WorkerId, string> = {
  sender: 'queued messages are not sent; they wait in the queue and, after repeated failures, end as failed',
  'dead-letter': 'messages the queue gave up on stay in status queued/processing instead of failed',
  dispatcher: 'scheduled messages are not sent at their send_at time and stranded messages are not re-queued',
  'delivery-events': 'message and recipient statuses stop moving to delivered or bounced',
  'webhook-fanout':
    'webhook events stop being created; they are not lost while the table stream keeps them (24 h), and follow once it recovers',
  'webhook-delivery':
    'webhook receivers stop getting events; queued jobs wait and are delivered once it recovers',
  'stats-counter':
    'statistics and the per-domain dashboard stop moving; nothing is lost while the table stream keeps the changes (24 h), and the counts catch up once it recovers',
  inbound:
    'received mail is not stored or announced; SES keeps it in S3 and its receipts wait in the inbound queue (then its dead-letter queue) until the function recovers',
};
