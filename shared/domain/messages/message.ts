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
      if (recipient.detail !== undefined) view.detail = recipient.detail;
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
        : { status: entry.status, at: formatDate(entry.at), detail: entry.detail },
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
