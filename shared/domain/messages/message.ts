import { formatDate } from '../../time/format.ts';
import type { Address } from './addresses.ts';
import type { MessageStatus, RecipientStatus, SchedulingMode } from './statuses.ts';

/** The stored message (docs/data-model.md), without the key and index attributes. */
export type ContentKind = 'text_only' | 'html_only' | 'mixed' | 'eml';

export interface StoredRecipient {
  email: string;
  name?: string;
  kind: 'to' | 'cc' | 'bcc';
  status: RecipientStatus;
  detail?: string;
  updated_at: string;
}

/** One entry of a message's status history; `recipient` is set when the change is about one recipient. */
export interface HistoryEntry {
  status: string;
  at: string;
  detail?: string;
  recipient?: string;
}

export interface StoredAttachment {
  filename: string;
  content_type: string;
  size: number;
  key: string;
}

export interface MessageParts {
  text?: string;
  html?: string;
  eml?: string;
}

export interface MessageItem {
  message_uuid: string;
  account_id: string;
  tenant: string;
  message_sender: string;
  from: Address[];
  to: Address[];
  cc: Address[];
  bcc: Address[];
  reply_to: Address[];
  subject: string;
  content_kind: ContentKind;
  headers: Record<string, string>;
  parts: MessageParts;
  attachments: StoredAttachment[];
  scheduling: { mode: SchedulingMode; send_at?: string };
  status: MessageStatus;
  recipients: StoredRecipient[];
  history: HistoryEntry[];
  created_at: string;
  updated_at: string;
  attempts: number;
}

/** S3 keys of a message's objects: one prefix per message. */
export const objectKeys = {
  prefix: (uuid: string) => `messages/${uuid}/`,
  text: (uuid: string) => `messages/${uuid}/text.txt`,
  html: (uuid: string) => `messages/${uuid}/body.html`,
  eml: (uuid: string) => `messages/${uuid}/message.eml`,
  attachment: (uuid: string, index: number) => `messages/${uuid}/attachments/${index}`,
};

/** Every S3 key an item refers to. */
export function objectKeysOf(item: Pick<MessageItem, 'parts' | 'attachments'>): string[] {
  const keys = [item.parts?.text, item.parts?.html, item.parts?.eml].filter(
    (key): key is string => typeof key === 'string',
  );
  for (const attachment of item.attachments ?? []) keys.push(attachment.key);
  return keys;
}

export function recipientsOf(
  groups: { to: Address[]; cc: Address[]; bcc: Address[] },
  at: string,
): StoredRecipient[] {
  const recipients: StoredRecipient[] = [];
  for (const kind of ['to', 'cc', 'bcc'] as const) {
    for (const address of groups[kind]) {
      recipients.push({ ...address, kind, status: 'pending', updated_at: at });
    }
  }
  return recipients;
}

/** The index sort key of a message: creation time (UTC ISO) then uuid, so it sorts as text. */
export function sortKeyOf(item: Pick<MessageItem, 'created_at' | 'message_uuid'>): string {
  return `${item.created_at}#${item.message_uuid}`;
}

const copyAddress = (address: Address) =>
  address.name === undefined ? { email: address.email } : { email: address.email, name: address.name };

function schedulingView(scheduling: MessageItem['scheduling']) {
  return scheduling.send_at === undefined
    ? { mode: scheduling.mode }
    : { mode: scheduling.mode, send_at: formatDate(scheduling.send_at) };
}

const utcTimestamp = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z\b/g;

/**
 * A stored detail text as the caller sees it: the UTC timestamps that the service writes into
 * details (e.g. "released by the scheduler for 2026-11-22T08:15:00.000Z") are shown in the server
 * time zone with its offset, like every other date of the answer.
 */
export function detailView(detail: string): string {
  return detail.replace(utcTimestamp, (match) => {
    const time = Date.parse(match);
    return Number.isNaN(time) ? match : formatDate(time);
  });
}

/** A query by uuid: everything but the bodies and attachment contents. */
export function detailsView(item: MessageItem) {
  return {
    message_uuid: item.message_uuid,
    status: item.status,
    message_sender: item.message_sender,
    tenant: item.tenant,
    from: (item.from ?? []).map(copyAddress),
    reply_to: (item.reply_to ?? []).map(copyAddress),
    recipients: (item.recipients ?? []).map((recipient) => {
      const view: Record<string, string> = { email: recipient.email };
      if (recipient.name !== undefined) view.name = recipient.name;
      view.kind = recipient.kind;
      view.status = recipient.status;
      if (recipient.detail !== undefined) view.detail = detailView(recipient.detail);
      view.updated_at = formatDate(recipient.updated_at);
      return view;
    }),
    subject: item.subject ?? '',
    content_kind: item.content_kind,
    headers: item.headers ?? {},
    attachments: (item.attachments ?? []).map(({ filename, content_type, size }) => ({
      filename,
      content_type,
      size,
    })),
    scheduling: schedulingView(item.scheduling),
    status_history: (item.history ?? []).map((entry) =>
      entry.detail === undefined
        ? { status: entry.status, at: formatDate(entry.at) }
        : { status: entry.status, at: formatDate(entry.at), detail: detailView(entry.detail) },
    ),
    created_at: formatDate(item.created_at),
    updated_at: formatDate(item.updated_at),
  };
}

/** One entry of a filtered list. */
export function summaryView(item: MessageItem) {
  return {
    message_uuid: item.message_uuid,
    status: item.status,
    message_sender: item.message_sender,
    subject: item.subject ?? '',
    content_kind: item.content_kind,
    recipients_count: (item.recipients ?? []).length,
    scheduling: schedulingView(item.scheduling),
    created_at: formatDate(item.created_at),
    updated_at: formatDate(item.updated_at),
  };
}

/*
 * Size bounds of the stored message item (docs/data-model.md, "Item size"). DynamoDB refuses an
 * item over 400 KB, so an accepted message must never grow past it over its life:
 * - at creation, the item (addresses, names, subject, headers, attachment metadata) is at most
 *   `maxCreatedItemBytes`, else the request is 107;
 * - afterwards it grows only by recipient details, the relay's reply and history entries; each
 *   detail is clipped to `maxDetailLength` characters and the history holds at most
 *   `maxHistoryEntries` entries (later changes overwrite the last entry, so the latest status
 *   always shows).
 * 50 recipients × (254 + 4 × 300 bytes of detail) + 64 entries × (254 + 4 × 300 + 64) + the relay's
 * reply stays under 190 KB, so 200 KB + 190 KB < 400 KB.
 */
export const maxDetailLength = 300;
export const maxHistoryEntries = 64;
export const maxCreatedItemBytes = 200 * 1024;

/** A detail text cut to `maxDetailLength` characters (an ellipsis marks the cut). */
export function clipDetail(detail: string): string;
export function clipDetail(detail: string | undefined): string | undefined;
export function clipDetail(detail: string | undefined): string | undefined {
  if (detail === undefined || detail.length <= maxDetailLength) return detail;
  return `${detail.slice(0, maxDetailLength - 1)}…`;
}

/** A history entry with its detail clipped. */
export function boundedEntry(entry: HistoryEntry): HistoryEntry {
  return entry.detail === undefined ? entry : { ...entry, detail: clipDetail(entry.detail) };
}

/**
 * An upper estimate of the item's DynamoDB size: its JSON text in UTF-8 bytes (DynamoDB counts
 * attribute names and values in UTF-8; JSON adds quotes and punctuation on top, never less).
 */
export function estimatedItemBytes(item: unknown): number {
  return Buffer.byteLength(JSON.stringify(item));
}
