import {
  clipDetail,
  type HistoryEntry,
  type MessageStatus,
  type RecipientStatus,
  type StoredRecipient,
} from '../../messages/index.ts';

/**
 * Pure status rules of the delivery pipeline (docs/data-model.md, docs/delivery.md). No AWS here.
 */

export type { HistoryEntry, MessageStatus, RecipientStatus };
export type Recipient = StoredRecipient;

export const finalStatuses: ReadonlySet<MessageStatus> = new Set([
  'cancelled',
  'delivered',
  'bounced',
  'failed',
  'suppressed',
]);

/**
 * The message status that its recipients' statuses imply once the relay has accepted it
 * (docs/delivery.md, "Statuses"): `delivered` when every recipient is delivered, `bounced` when one bounced and none is
 * pending; while any recipient is pending the message stays `sent`. Recipients that failed without a
 * bounce (refused temporarily, rejected by the relay) make the message `failed` once none is pending,
 * unless one bounced. Suppressed recipients (never attempted) do not count, except that a message
 * whose every recipient is suppressed is `suppressed` (docs/suppressions.md).
 */
export function messageStatusFromRecipients(recipients: readonly Pick<Recipient, 'status'>[]): MessageStatus {
  if (recipients.length === 0) return 'sent';
  if (recipients.some((recipient) => recipient.status === 'pending')) return 'sent';
  const attempted = recipients.filter((recipient) => recipient.status !== 'suppressed');
  if (attempted.length === 0) return 'suppressed';
  if (attempted.every((recipient) => recipient.status === 'delivered')) return 'delivered';
  if (attempted.some((recipient) => recipient.status === 'bounced')) return 'bounced';
  return 'failed';
}

export interface RecipientUpdate {
  email: string;
  status: RecipientStatus;
  detail?: string;
  /** SES's classification of the event (a bounce's `Permanent/General`), kept in the history. */
  kind?: string;
}

/**
 * Applies per-recipient results to a message's recipient list (matched by address, case-insensitive).
 * A recipient already `bounced`, `failed` or `suppressed` keeps that status; `delivered` may still turn into
 * `bounced` (an asynchronous bounce after the relay reported delivery). Returns the new list and the
 * updates that changed something.
 */
export function applyRecipientUpdates(
  recipients: readonly Recipient[],
  updates: readonly RecipientUpdate[],
  at: string,
): { recipients: Recipient[]; applied: RecipientUpdate[] } {
  const next = recipients.map((recipient) => ({ ...recipient }));
  const applied: RecipientUpdate[] = [];
  for (const update of updates) {
    const address = update.email.toLowerCase();
    for (const recipient of next) {
      if (recipient.email.toLowerCase() !== address) continue;
      if (!canMove(recipient.status, update.status)) continue;
      recipient.status = update.status;
      recipient.updated_at = at;
      if (update.detail !== undefined) recipient.detail = clipDetail(update.detail);
      else delete recipient.detail;
      applied.push(update);
    }
  }
  return { recipients: next, applied: dedupe(applied) };
}

function canMove(from: RecipientStatus, to: RecipientStatus): boolean {
  if (from === to) return false;
  if (from === 'pending') return true;
  return from === 'delivered' && to === 'bounced';
}

function dedupe(updates: RecipientUpdate[]): RecipientUpdate[] {
  const seen = new Set<string>();
  return updates.filter((update) => {
    const key = `${update.email.toLowerCase()}|${update.status}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What a sender may do with a message it took from the queue. */
export type ClaimDecision =
  | { action: 'claim'; from: 'queued' | 'scheduled' | 'processing' }
  | { action: 'skip'; reason: string }
  | { action: 'retry-later'; reason: string };

/**
 * Decides whether a sender may claim a message: a `queued` one always; a `processing` one only when
 * its lease has expired (its sender died); a `scheduled` one once its `send_at` has passed (a queue
 * entry released by a delay). A live lease means another sender holds it: retry later, so that the
 * queue's redelivery still covers a sender that dies. Anything else (sent, cancelled, deleted…) is
 * skipped: acknowledged and never sent.
 */
export function claimDecision(
  message: { status: string; lease_until?: number; send_at?: string } | undefined,
  nowMs: number,
): ClaimDecision {
  if (message === undefined) return { action: 'skip', reason: 'message no longer exists' };
  switch (message.status) {
    case 'queued':
      return { action: 'claim', from: 'queued' };
    case 'processing':
      // Every claim writes a lease; an item without one was put in this state by something else,
      // so it is not taken over here (the dead-letter path still fails it in the end).
      if (message.lease_until !== undefined && message.lease_until <= nowMs) {
        return { action: 'claim', from: 'processing' };
      }
      return { action: 'retry-later', reason: 'another sender holds the lease' };
    case 'scheduled': {
      const sendAt = message.send_at === undefined ? Number.NaN : Date.parse(message.send_at);
      if (!Number.isNaN(sendAt) && sendAt <= nowMs) return { action: 'claim', from: 'scheduled' };
      return { action: 'skip', reason: 'scheduled for later; the dispatcher releases it' };
    }
    default:
      return { action: 'skip', reason: `message is ${message.status}` };
  }
}

/**
 * Whether a write that moves a message to `status` records that status as an entry of its own: not
 * when the entries the write adds about its recipients already say it, so a message whose only
 * recipient was delivered shows `delivered` once in its history, not once for the recipient and once
 * for the message. Webhooks and statistics count recipient changes, never these entries.
 */
export function needsMessageEntry(status: MessageStatus, added: readonly HistoryEntry[]): boolean {
  return !added.some((entry) => entry.recipient !== undefined && entry.status === status);
}
