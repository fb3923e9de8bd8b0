import { createHash } from 'node:crypto';
import type { Metadata, Tag } from './labels.ts';

/**
 * What changed in a message with one committed write: the one idea of "a message changed" that
 * webhooks (shared/webhooks) and statistics (shared/stats) both consume. Pure: the table-stream reader
 * gives it the message as it was before and after the write (both read through `messageSnapshotOf`,
 * the one place that knows the stored layout) and gets the changes back, one per recipient change
 * and one per cancelled message, each named as the webhook event that reports it.
 */
export const messageEventTypes = [
  'message.sent',
  'message.delivered',
  'message.bounced',
  'message.complained',
  'message.delayed',
  'message.failed',
  'message.suppressed',
  'message.cancelled',
  'recipient.unsubscribed',
  'message.opened',
  'message.clicked',
] as const;

export type MessageEventType = (typeof messageEventTypes)[number];

/** A recipient as the events need it. */
export interface RecipientSnapshot {
  email: string;
  status: string;
  detail?: string;
  updatedAt?: string;
}

/** One status-history entry; `recipient` is set when the entry is about one recipient. */
export interface HistorySnapshot {
  status: string;
  at: string;
  detail?: string;
  recipient?: string;
}

/** The parts of a message item that events are made of. */
export interface MessageSnapshot {
  messageUuid: string;
  accountId: string;
  status: string;
  subject: string;
  recipients: RecipientSnapshot[];
  history: HistorySnapshot[];
  /** The message's labels, carried in every event of it (`data.tags`, `data.metadata`). */
  tags: Tag[];
  metadata: Metadata;
  /** Absent: transactional. */
  stream?: 'broadcast';
}

/** One change of one message (a webhook event of the message's, once delivered). */
export interface MessageChange {
  /** Deterministic: the same change always yields the same id (the `webhook-id` header). */
  id: string;
  type: MessageEventType;
  accountId: string;
  messageUuid: string;
  /** When the change happened (UTC ISO 8601). */
  at: string;
  messageStatus: string;
  subject: string;
  recipient: { email: string; status: string; detail: string | null } | null;
  tags: Tag[];
  metadata: Metadata;
  stream: 'transactional' | 'broadcast';
  /** Further members of the event's `data` (an open's or a click's facts, shared/tracking). */
  extra?: Record<string, unknown>;
}

/** Recipient statuses that are events of their own when a recipient reaches them. */
const recipientStatusEvents: Record<string, MessageEventType> = {
  delivered: 'message.delivered',
  bounced: 'message.bounced',
  failed: 'message.failed',
  suppressed: 'message.suppressed',
};

/** History entries about one recipient that are events without a status change. */
const recipientNoteEvents: Record<string, MessageEventType> = {
  complaint: 'message.complained',
  complained: 'message.complained',
  delayed: 'message.delayed',
  unsubscribed: 'recipient.unsubscribed',
};

/** The status a recipient is reported with in each event's `recipient.status` (none for a cancel). */
export const reportedStatus = {
  'message.sent': 'sent',
  'message.delivered': 'delivered',
  'message.bounced': 'bounced',
  'message.complained': 'complained',
  'message.delayed': 'delayed',
  'message.failed': 'failed',
  'message.suppressed': 'suppressed',
  'message.cancelled': 'cancelled',
  'recipient.unsubscribed': 'unsubscribed',
  'message.opened': 'opened',
  'message.clicked': 'clicked',
} as const satisfies Record<MessageEventType, string>;

/**
 * The event id: a hash of what identifies the change (message, recipient, type and, for events that
 * may repeat, the time of the history entry), so a stream batch processed twice yields the same ids.
 */
export function eventIdOf(parts: readonly string[]): string {
  return `evt_${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32)}`;
}

const lower = (email: string) => email.toLowerCase();

/**
 * The events one write produced: one per recipient change (sent, delivered, bounced, complained,
 * delayed, failed, suppressed) and one `message.cancelled` per message. `before` is undefined for a
 * new item. History is append-only, so the entries added by the write are those past the old length.
 */
export function deriveChanges(before: MessageSnapshot | undefined, after: MessageSnapshot): MessageChange[] {
  const events: MessageChange[] = [];
  const added = after.history.slice(before?.history.length ?? 0);
  const previous = new Map<string, RecipientSnapshot>();
  for (const recipient of before?.recipients ?? []) previous.set(lower(recipient.email), recipient);

  const make = (
    type: MessageEventType,
    at: string,
    recipient: RecipientSnapshot | undefined,
    idParts: readonly string[],
    detail?: string,
  ): MessageChange => ({
    id: eventIdOf([
      after.messageUuid,
      type,
      ...(recipient === undefined ? [] : [lower(recipient.email)]),
      ...idParts,
    ]),
    type,
    accountId: after.accountId,
    messageUuid: after.messageUuid,
    at,
    messageStatus: after.status,
    subject: after.subject,
    tags: after.tags,
    metadata: after.metadata,
    stream: after.stream ?? 'transactional',
    recipient:
      recipient === undefined
        ? null
        : {
            email: recipient.email,
            status: reportedStatus[type],
            detail: detail ?? recipient.detail ?? null,
          },
  });

  // message.sent: the write that records the relay's acceptance, for every recipient it accepted.
  const sentEntry = added.find((entry) => entry.status === 'sent' && entry.recipient === undefined);
  if (sentEntry !== undefined) {
    for (const recipient of after.recipients) {
      const was = previous.get(lower(recipient.email))?.status ?? 'pending';
      if (was !== 'pending') continue;
      if (recipient.status !== 'pending' && recipient.status !== 'delivered') continue;
      events.push(make('message.sent', sentEntry.at, recipient, [], sentEntry.detail));
    }
  }
  // A tracked message's copies are accepted one by one, so each has its own `sent` entry.
  for (const entry of added) {
    if (entry.status !== 'sent' || entry.recipient === undefined) continue;
    const recipient = after.recipients.find(
      (candidate) => lower(candidate.email) === lower(entry.recipient as string),
    );
    if (recipient === undefined) continue;
    events.push(make('message.sent', entry.at, recipient, [], entry.detail));
  }

  // Recipient status changes (a recipient reaches each status at most once).
  for (const recipient of after.recipients) {
    const type = recipientStatusEvents[recipient.status];
    if (type === undefined) continue;
    const was = previous.get(lower(recipient.email))?.status;
    if (was === recipient.status) continue;
    events.push(make(type, recipient.updatedAt ?? lastAt(added, after), recipient, []));
  }

  // Complaints and delays: history notes about one recipient.
  for (const entry of added) {
    const type = entry.recipient === undefined ? undefined : recipientNoteEvents[entry.status];
    if (type === undefined || entry.recipient === undefined) continue;
    const recipient = after.recipients.find(
      (candidate) => lower(candidate.email) === lower(entry.recipient as string),
    ) ?? {
      email: entry.recipient,
      status: entry.status,
    };
    events.push(make(type, entry.at, recipient, [entry.at], entry.detail));
  }

  // message.cancelled: once per message, with no recipient.
  if (after.status === 'cancelled' && before?.status !== 'cancelled') {
    const entry = added.find((candidate) => candidate.status === 'cancelled');
    events.push(make('message.cancelled', entry?.at ?? lastAt(added, after), undefined, []));
  }
  return events;
}

function lastAt(added: readonly HistorySnapshot[], after: MessageSnapshot): string {
  return added.at(-1)?.at ?? after.history.at(-1)?.at ?? new Date(0).toISOString();
}

/** What a message is counted under in statistics besides its account: domain, tags, creation time. */
export interface MessageLabels {
  /** The sending domain. */
  tenant: string;
  tags: ReadonlyArray<{ name: string; value: string }>;
  stream: 'transactional' | 'broadcast';
  /** UTC ISO: when it was accepted. */
  createdAt: string;
}
