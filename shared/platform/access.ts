/**
 * What a function may touch, declared with its route (`access` in a wing's route details) or worker.
 * The stack turns each declaration into environment variables plus IAM statements through the grant
 * helpers of `ServiceFunction`, so a function that does not declare something can neither find it
 * nor reach it.
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
 * - dkimKey: `encrypt` (GenerateDataKey, Encrypt), `decrypt` (Decrypt) or both (`encrypt-decrypt`)
 *   with the DKIM KMS key.
 * - dkimKeyPool: `take` (DeleteItem of the DKIM key pool's items only: a condition on the items'
 *   leading key), for domain add, which takes its RSA key from the pool made ahead.
 * - webhookQueue / webhookDeadLetterQueue: `send` (SendMessage) on the webhook queue or its DLQ.
 * - webhookSecrets: `encrypt` or `decrypt` with the key-wrapping KMS key, only for ciphertexts whose
 *   encryption context says `purpose = svc-mail-webhook-secret` (a condition in the statement).
 * - mail: sends through SES with the configuration set.
 * - sesIdentities: creates, reads and deletes SES domain identities (self-service domains with
 *   MAIL_TRANSPORT=ses: CreateEmailIdentity, PutEmailIdentityMailFromAttributes, GetEmailIdentity,
 *   DeleteEmailIdentity), and knows the transport (MAIL_TRANSPORT).
 * - composes: knows which relay the sender uses (MAIL_TRANSPORT), to compose as it would.
 * - avatars: reads the avatar settings (Gravatar base URL, cache lifetime).
 * - linkTokens: `open` or `seal` the tokens of links in mail (the link key's secret; sealing also
 *   PUBLIC_API_URL).
 */
export type TableAccess = 'read' | 'write' | 'delete' | 'write-delete' | 'write-batch' | 'settle-counters';
export type ObjectAccess = 'read' | 'write' | 'delete';
export type ObjectPrefix = 'messages/' | 'avatars/' | 'housekeeping/' | 'templates/' | 'inbound/';

export interface AccessNeeds {
  readonly table?: TableAccess;
  readonly queue?: 'send';
  readonly objects?: Partial<Record<ObjectPrefix, readonly ObjectAccess[]>>;
  readonly dkimKey?: 'encrypt' | 'decrypt' | 'encrypt-decrypt';
  readonly dkimKeyPool?: 'take';
  readonly webhookQueue?: 'send';
  readonly webhookDeadLetterQueue?: 'send';
  readonly webhookSecrets?: 'encrypt' | 'decrypt';
  readonly mail?: true;
  readonly sesIdentities?: true;
  /** Composes messages as the sender does, without sending: the relay's name (MAIL_TRANSPORT). */
  readonly composes?: true;
  readonly avatars?: true;
  /**
   * The tokens of links in mail (shared/platform/tokens/link-tokens.ts): `open` reads the link key's
   * secret (LINK_TOKEN_SECRET_ARN); `seal` also knows the public base URL the links start with
   * (PUBLIC_API_URL). Only workers seal: a route function that knew the API's URL would make the API
   * depend on itself.
   */
  readonly linkTokens?: 'seal' | 'open';
}
