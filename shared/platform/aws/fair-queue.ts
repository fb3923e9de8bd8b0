import { createHash } from 'node:crypto';

/**
 * The tenant of a queue message, for SQS fair queues (docs/decisions/0024-multi-tenant-fairness.md):
 * every message sent to the send queue and the webhook queue carries its account as
 * `MessageGroupId`, so SQS serves a quiet account's messages ahead of a noisy account's backlog
 * (a standard queue with group ids is a fair queue; order and throughput stay those of a standard
 * queue). SQS accepts 1 to 128 printable ASCII characters; another account id is hashed.
 */
export function messageGroupOf(accountId: string): string {
  return /^[\x21-\x7e]{1,128}$/.test(accountId)
    ? accountId
    : `sha256:${createHash('sha256').update(accountId).digest('base64url')}`;
}
