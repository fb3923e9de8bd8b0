import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import type { Address } from '../../platform/mail/addresses.ts';
import { formatDate } from '../../platform/time/format.ts';
import type { Metadata, Tag } from './labels.ts';
import { recipientEvents } from './recipient-events.ts';
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

/**
 * One entry of a message's status history; `recipient` is set when the change is about one
 * recipient, and its detail then reads `<recipient>: <what the receiving side said>`
 * (`recipientEntry`). `kind` is SES's classification of a bounce (`Permanent/General`), a delay
 * (`MailboxFull`) or a complaint (`abuse`); the detail's answer then starts with `<kind>: ` (the
 * complaint's answer is its kind).
 */
export interface HistoryEntry {
  status: string;
  at: string;
  detail?: string;
  recipient?: string;
  kind?: string;
}

/** A history entry about one recipient: the detail names it, then gives the answer. */
export function recipientEntry(
  status: string,
  at: string,
  recipient: string,
  answer: string,
  kind?: string,
): HistoryEntry {
  return {
    status,
    at,
    recipient,
    detail: `${recipient}: ${answer}`,
    ...(kind === undefined ? {} : { kind }),
  };
}

/** An attachment's bytes are `size` bytes at `offset` of the message's content object. */
export interface StoredAttachment {
  filename: string;
  content_type: string;
  size: number;
  offset: number;
}

/** `[offset, length]` of a part inside the message's one content object. */
export type ByteRange = [number, number];

/**
 * Where a message's bodies are (docs/data-model.md, "Bodies"): in a content item beside the
 * message item (`sk = CONTENT`, written once) when text, HTML and EML together take at most
 * `contentItemLimit` bytes compressed and there is no attachment; otherwise one S3 object per message
 * holding every part and attachment back to back, at the byte ranges recorded here.
 */
export type StoredContent = { store: 'item' } | ({ store: 's3'; key: string } & BodyRanges);

/**
 * The bodies as the content item holds them: text, HTML and EML back to back, Brotli-compressed
 * in one binary attribute (`z`), at the byte ranges recorded beside it.
 */
export interface ContentBodies extends BodyRanges {
  z: Uint8Array;
}

/**
 * Compressed bodies up to this many bytes go to the content item. It is written once (1 write
 * unit per KB) and read once; an S3 PUT costs as much as 8 write units and its GET as 3 read units,
 * so up to 6 KB the item is the cheaper store, and it keeps every item far below DynamoDB's 400 KB
 * (docs/decisions/0018-message-storage.md). Bodies are never inline in the message item, which is rewritten at every
 * status change and would pay for them each time.
 */
export const contentItemLimit = 6 * 1024;

/**
 * Bodies larger than this are not tried for the content item: text compresses 3–10 times at best,
 * so they would not fit, and compressing them would only cost time.
 */
export const compressionCeiling = 128 * 1024;

/** Brotli at quality 5 in text mode: close to the best ratio at a fraction of its time. */
const brotliOptions = {
  params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
};

/** The ranges of the body parts inside a content item's or an S3 object's bytes. */
export type BodyRanges = { text?: ByteRange; html?: ByteRange; eml?: ByteRange };

/** `length` bytes at `offset`, or undefined when the range runs past the end. */
export function sliceAt(bytes: Buffer, [offset, length]: ByteRange): Buffer | undefined {
  return offset + length > bytes.length ? undefined : bytes.subarray(offset, offset + length);
}

/** The text, HTML and EML at their ranges of `bytes`; undefined when a range runs past the end. */
export function partsAt(
  bytes: Buffer,
  ranges: BodyRanges,
): { text?: Buffer; html?: Buffer; eml?: Buffer } | undefined {
  const parts: { text?: Buffer; html?: Buffer; eml?: Buffer } = {};
  for (const name of ['text', 'html', 'eml'] as const) {
    const range = ranges[name];
    if (range === undefined) continue;
    const part = sliceAt(bytes, range);
    if (part === undefined) return undefined;
    parts[name] = part;
  }
  return parts;
}

/** The bodies of a content item, as bytes. */
export function unpackBodies(bodies: ContentBodies): { text?: Buffer; html?: Buffer; eml?: Buffer } {
  const parts = partsAt(brotliDecompressSync(bodies.z), bodies);
  if (parts === undefined) throw new Error('content item is shorter than its ranges');
  return parts;
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
  /** Absent when none (restored as empty on read). */
  tags?: Tag[];
  metadata?: Metadata;
  content: StoredContent;
  attachments: StoredAttachment[];
  scheduling: { mode: SchedulingMode; send_at?: string };
  /** Tracking as asked at add (docs/tracking.md); absent: the domain's default. */
  tracking?: { opens?: boolean; clicks?: boolean };
  status: MessageStatus;
  recipients: StoredRecipient[];
  history: HistoryEntry[];
  created_at: string;
  updated_at: string;
  attempts: number;
  /** UTC ISO: when the dispatcher looks at the message again (queued, processing, scheduled). */
  due_at?: string;
  /** How many download objects the content route stored (absent: none). */
  downloads?: number;
  /** The template the subject and bodies were rendered from when the message was accepted. */
  template?: { alias: string; version: number; layout?: { alias: string; version: number } };
  /** Absent: transactional (docs/streams.md). */
  stream?: 'broadcast';
  /** The List-Id of a broadcast, as given. */
  list_id?: string;
}

/**
 * S3 keys of a message: its content object (when its bodies are not inline), and what the content
 * route stored for download (the signed message, then each attachment in order).
 */
export const objectKeys = {
  prefix: (uuid: string) => `messages/${uuid}/`,
  content: (uuid: string) => `messages/${uuid}/content`,
  download: (uuid: string, index: number) =>
    index === 0 ? `messages/${uuid}/download/message.eml` : `messages/${uuid}/download/attachment-${index}`,
};

/**
 * Every S3 key an item refers to: its content object, if any, and its `downloads` download objects
 * (recorded by the content route before it stores them).
 */
export function objectKeysOf(item: Pick<MessageItem, 'message_uuid' | 'content' | 'downloads'>): string[] {
  const found = item.content?.store === 's3' ? [item.content.key] : [];
  for (let index = 0; index < (item.downloads ?? 0); index++)
    found.push(objectKeys.download(item.message_uuid, index));
  return found;
}

export interface ContentInput {
  text?: string;
  html?: string;
  eml?: Uint8Array;
  attachments: Array<{ filename: string; content_type: string; body: Uint8Array }>;
  /** Store in S3 whatever the size (test helpers that arrange a missing object). */
  forceObject?: boolean;
}

/**
 * Decides where a new message's bodies go and lays out its content object: the item's `content`
 * and `attachments`, the content item's bodies or the object to store.
 */
export function planContent(
  uuid: string,
  input: ContentInput,
): {
  content: StoredContent;
  attachments: StoredAttachment[];
  bodies?: ContentBodies;
  object?: Uint8Array;
} {
  const text = input.text === undefined ? undefined : Buffer.from(input.text, 'utf8');
  const html = input.html === undefined ? undefined : Buffer.from(input.html, 'utf8');
  const eml = input.eml === undefined ? undefined : Buffer.from(input.eml);
  // Text, HTML and EML back to back, as both stores keep them (the object then adds attachments).
  const chunks: Buffer[] = [];
  let offset = 0;
  const place = (bytes: Uint8Array): ByteRange => {
    const range: ByteRange = [offset, bytes.length];
    chunks.push(Buffer.from(bytes));
    offset += bytes.length;
    return range;
  };
  const ranges: BodyRanges = {};
  if (text !== undefined) ranges.text = place(text);
  if (html !== undefined) ranges.html = place(html);
  if (eml !== undefined) ranges.eml = place(eml);
  if (input.forceObject !== true && input.attachments.length === 0 && offset <= compressionCeiling) {
    const z = brotliCompressSync(Buffer.concat(chunks), brotliOptions);
    if (z.length <= contentItemLimit)
      return { content: { store: 'item' }, attachments: [], bodies: { z, ...ranges } };
  }
  const content: StoredContent = { store: 's3', key: objectKeys.content(uuid), ...ranges };
  const attachments = input.attachments.map((attachment) => {
    const [start, size] = place(attachment.body);
    return { filename: attachment.filename, content_type: attachment.content_type, size, offset: start };
  });
  return { content, attachments, object: Buffer.concat(chunks) };
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
export function detailsView(
  item: MessageItem,
  tracking: ReadonlyMap<number, Record<string, unknown>> = new Map(),
) {
  const events = recipientEvents(item.recipients ?? [], item.history ?? []);
  return {
    message_uuid: item.message_uuid,
    status: item.status,
    message_sender: item.message_sender,
    tenant: item.tenant,
    from: (item.from ?? []).map(copyAddress),
    reply_to: (item.reply_to ?? []).map(copyAddress),
    recipients: (item.recipients ?? []).map((recipient, index) => {
      const view: Record<string, unknown> = { email: recipient.email };
      if (recipient.name !== undefined) view.name = recipient.name;
      view.kind = recipient.kind;
      view.status = recipient.status;
      if (recipient.detail !== undefined) view.detail = detailView(recipient.detail);
      view.updated_at = formatDate(recipient.updated_at);
      view.events = (events[index] ?? []).map((event) => ({ ...event, at: formatDate(event.at) }));
      const tracked = tracking.get(index);
      if (tracked !== undefined) view.tracking = tracked;
      return view;
    }),
    subject: item.subject ?? '',
    content_kind: item.content_kind,
    headers: item.headers ?? {},
    tags: (item.tags ?? []).map(({ name, value }) => ({ name, value })),
    metadata: { ...(item.metadata ?? {}) },
    attachments: (item.attachments ?? []).map(({ filename, content_type, size }) => ({
      filename,
      content_type,
      size,
    })),
    scheduling: schedulingView(item.scheduling),
    ...(item.template === undefined ? {} : { template: item.template }),
    stream: item.stream ?? 'transactional',
    ...(item.list_id === undefined ? {} : { list_id: item.list_id }),
    tracking: { ...item.tracking },
    status_history: (item.history ?? []).map((entry) =>
      entry.detail === undefined
        ? { status: entry.status, at: formatDate(entry.at) }
        : { status: entry.status, at: formatDate(entry.at), detail: detailView(entry.detail) },
    ),
    created_at: formatDate(item.created_at),
    updated_at: formatDate(item.updated_at),
  };
}

/** How many recipients a list entry names: enough to recognise a message, the count says the rest. */
const listedRecipients = 2;

/** One entry of a filtered list. */
export function summaryView(item: MessageItem) {
  return {
    message_uuid: item.message_uuid,
    status: item.status,
    message_sender: item.message_sender,
    subject: item.subject ?? '',
    content_kind: item.content_kind,
    recipients_count: (item.recipients ?? []).length,
    recipients: (item.recipients ?? []).slice(0, listedRecipients).map((recipient) => recipient.email),
    scheduling: schedulingView(item.scheduling),
    stream: item.stream ?? 'transactional',
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
