import { createHash } from 'node:crypto';

/**
 * Key layout of the single DynamoDB table (see docs/data-model.md). Every item has `pk` and `sk`;
 * the indexes use `gsi1pk/gsi1sk` (an account's messages, newest first), `gsi2pk/gsi2sk` (an
 * account's messages by status) and `gsi3pk/gsi3sk` (the sparse "due" index for the dispatcher);
 * the sparse `suppressions` index uses `suppressions_pk/suppressions_sk` (an account's suppression
 * list, by reason, newest first). Only suppression items carry those two attributes.
 */
export const keys = {
  account: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: 'ACCOUNT' }),
  domain: (domain: string) => ({ pk: `DOMAIN#${domain}`, sk: 'DOMAIN' }),
  domainsOfAccount: (accountId: string) => `ACCOUNT_DOMAINS#${accountId}`,
  dkimKey: (domain: string, selector: string) => ({ pk: `DOMAIN#${domain}`, sk: `DKIM#${selector}` }),
  message: (messageUuid: string) => ({ pk: `MESSAGE#${messageUuid}`, sk: 'MESSAGE' }),
  messagesOfAccount: (accountId: string) => `ACCOUNT_MESSAGES#${accountId}`,
  messagesOfAccountByStatus: (accountId: string, status: string) => `ACCOUNT_STATUS#${accountId}#${status}`,
  /**
   * The client's key is hashed (SHA-256, base64url): it may contain `#`, and account `a` with key
   * `b#c` must never share a record with account `a#b` and key `c`. The record also stores its
   * account, and a replay checks it.
   */
  idempotency: (accountId: string, key: string) => ({
    pk: `IDEMPOTENCY#${accountId}#${createHash('sha256').update(key).digest('base64url')}`,
    sk: 'IDEMPOTENCY',
  }),
  due: 'DUE',
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
} as const;
