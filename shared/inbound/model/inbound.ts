import { createHash } from 'node:crypto';
import { formatDate } from '../../platform/time/format.ts';
import type { AuthResults, SpamVerdict } from './receipt.ts';

/**
 * A received message as it is stored for one receiving envelope recipient (docs/inbound.md,
 * docs/data-model.md "Inbound"), and the views the API and the `inbound.received` event show.
 * Pure.
 */

export interface StoredAddress {
  email: string;
  name?: string;
}

export interface StoredAttachment {
  filename: string;
  content_type: string;
  size: number;
  /** The decoded attachment's object key. */
  key: string;
}

export interface InboundItem {
  inbound_uuid: string;
  account_id: string;
  /** The receiving domain (the recipient's), lower case. */
  domain: string;
  /** The envelope recipient (RCPT TO) this item was received for, lower case. */
  recipient: string;
  /** UTC ISO 8601. */
  received_at: string;
  /** SES's message id: the items of one received message share it (and its objects). */
  ses_message_id: string;
  from?: StoredAddress;
  to?: StoredAddress[];
  cc?: StoredAddress[];
  subject?: string;
  message_id?: string;
  in_reply_to?: string;
  reply_to_message_uuid?: string;
  mailbox_hash?: string;
  auth: AuthResults;
  spam: { verdict: SpamVerdict };
  attachments?: StoredAttachment[];
  /** Set when the message could not be parsed: only the raw message is kept. */
  parse_error?: string;
  /** `raw`: the message as received; `content`: text, HTML and headers (absent after a parse error). */
  objects: { raw: string; content?: string };
  /** Size of the raw message in bytes. */
  size: number;
  /** The other items made from the same received message (other recipients), sharing its objects. */
  siblings?: string[];
  /** Epoch seconds: the TTL attribute (received_at + the retention). */
  expires_at: number;
}

/** What the content object holds (JSON): the parts too large or too personal for the item. */
export interface InboundContent {
  text: string | null;
  html: string | null;
  stripped_text_reply: string | null;
  headers: Array<{ name: string; value: string }>;
}

/** Bounds that keep an item far below DynamoDB's 400 KB whatever a sender puts in the headers. */
export const inboundLimits = {
  addresses: 50,
  nameLength: 256,
  emailLength: 320,
  subjectLength: 998,
  messageIdLength: 998,
  attachments: 100,
  filenameLength: 255,
  contentTypeLength: 255,
  parseErrorLength: 300,
} as const;

export function clip(text: string, length: number): string {
  return text.length <= length ? text : text.slice(0, length);
}

export function clipAddress(address: { email?: string; name?: string }): StoredAddress | undefined {
  const email = (address.email ?? '').trim();
  if (email === '') return undefined;
  const name = (address.name ?? '').trim();
  return {
    email: clip(email, inboundLimits.emailLength),
    ...(name === '' ? {} : { name: clip(name, inboundLimits.nameLength) }),
  };
}

export function clipAddresses(list: readonly { email?: string; name?: string }[]): StoredAddress[] {
  return list
    .map(clipAddress)
    .filter((entry): entry is StoredAddress => entry !== undefined)
    .slice(0, inboundLimits.addresses);
}

/**
 * The id of the item one received message makes for one recipient: derived from SES's message id
 * and the recipient, so a notification processed twice writes the same items (formatted as an
 * RFC 9562 version 8 UUID: 122 bits of SHA-256).
 */
export function inboundUuidOf(sesMessageId: string, recipient: string): string {
  const hex = createHash('sha256').update(`${sesMessageId}\u0000${recipient.toLowerCase()}`).digest('hex');
  const variant = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The part after `+` in the recipient's local part (`support+ticket-42@…` → `ticket-42`), or null. */
export function mailboxHashOf(recipient: string): string | null {
  const at = recipient.lastIndexOf('@');
  const local = at === -1 ? recipient : recipient.slice(0, at);
  const plus = local.indexOf('+');
  if (plus === -1 || plus === local.length - 1) return null;
  return local.slice(plus + 1);
}

/** The domain of an address, lower case. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const messageIdShape = /<([^<>@\s]+)@([^<>\s]+)>/g;
/** References may list a whole thread; the nearest ancestors are the likely ones. */
const maxThreadCandidates = 20;

/**
 * The domain Amazon SES gives the Message-ID of what it sends: `email.amazonses.com` in us-east-1,
 * `<region>.amazonses.com` in every other region (`eu-west-1.amazonses.com`, `us-gov-west-1…`).
 */
const sesMessageIdDomain = /^(?:email|[a-z]{2}(?:-[a-z]+)+-\d{1,2})\.amazonses\.com$/;
/** SES's message ids: lower-case hex in dash-separated groups (`0100019356a1b2c3-…-000000`). */
const sesMessageIdShape = /^[0-9a-f]+(?:-[0-9a-f]+){2,}$/;
const sesMessageIdMaxLength = 100;

/**
 * SES's id in a Message-ID of the form SES writes, `<id@email.amazonses.com>` or
 * `<id@<region>.amazonses.com>` (angle brackets optional, case-insensitive); undefined for any other.
 */
export function sesMessageIdOf(messageId: string): string | undefined {
  const match = /^<?([^<>@\s]+)@([^<>@\s]+?)>?$/.exec(messageId.trim());
  if (match === null) return undefined;
  return sesMessageIdIn((match[1] as string).toLowerCase(), (match[2] as string).toLowerCase());
}

function sesMessageIdIn(local: string, domain: string): string | undefined {
  if (!sesMessageIdDomain.test(domain)) return undefined;
  if (local.length > sesMessageIdMaxLength || !sesMessageIdShape.test(local)) return undefined;
  return local;
}

/**
 * A message a reply may answer: one of this service's own ids, `<message_uuid@sending domain>`,
 * or one of Amazon SES's, `<SES id@…amazonses.com>` (SES replaced the service's id when it sent).
 */
export type ThreadCandidate =
  | { kind: 'message'; messageUuid: string; domain: string }
  | { kind: 'ses'; sesMessageId: string };

/**
 * The messages a reply may answer, nearest first: the ids of `In-Reply-To`, then `References`
 * from its end (the parent) back to the thread's start, at most 20. Only ids in the forms the
 * service's mail goes out with can be ours: `<message_uuid@sending domain>` (SMTP relay, local)
 * and SES's `<id@…amazonses.com>`; the caller checks each against the account's messages
 * (docs/inbound.md, "Threading").
 */
export function threadCandidates(
  inReplyTo: string | undefined,
  references: string | undefined,
): ThreadCandidate[] {
  const idsOf = (text: string | undefined) =>
    [...(text ?? '').matchAll(messageIdShape)].map((match) => ({
      local: (match[1] as string).toLowerCase(),
      domain: (match[2] as string).toLowerCase(),
    }));
  const ordered = [...idsOf(inReplyTo), ...idsOf(references).reverse()];
  const seen = new Set<string>();
  const candidates: ThreadCandidate[] = [];
  for (const id of ordered) {
    const sesMessageId = sesMessageIdIn(id.local, id.domain);
    const candidate: ThreadCandidate | undefined =
      sesMessageId !== undefined
        ? { kind: 'ses', sesMessageId }
        : uuidShape.test(id.local)
          ? { kind: 'message', messageUuid: id.local, domain: id.domain }
          : undefined;
    if (candidate === undefined) continue;
    const key = candidate.kind === 'ses' ? `ses ${candidate.sesMessageId}` : candidate.messageUuid;
    if (seen.has(key)) continue;
    seen.add(key);
    candidates.push(candidate);
    if (candidates.length === maxThreadCandidates) break;
  }
  return candidates;
}

const addressView = (address: StoredAddress) => ({ email: address.email, name: address.name ?? null });

/** The metadata of a received message: list entries and the `inbound.received` event's data. */
export function inboundSummaryView(item: InboundItem) {
  return {
    inbound_uuid: item.inbound_uuid,
    received_at: formatDate(item.received_at),
    recipient: item.recipient,
    from: item.from === undefined ? null : addressView(item.from),
    to: (item.to ?? []).map(addressView),
    cc: (item.cc ?? []).map(addressView),
    subject: item.subject ?? '',
    message_id: item.message_id ?? null,
    in_reply_to: item.in_reply_to ?? null,
    reply_to_message_uuid: item.reply_to_message_uuid ?? null,
    mailbox_hash: item.mailbox_hash ?? null,
    attachments: (item.attachments ?? []).map(({ filename, content_type, size }) => ({
      filename,
      content_type,
      size,
    })),
    auth: { spf: item.auth.spf, dkim: item.auth.dkim, dmarc: item.auth.dmarc },
    spam: { verdict: item.spam.verdict },
    size: item.size,
    parse_error: item.parse_error ?? null,
  };
}

/**
 * Text, HTML and the stripped reply are answered inline while they take at most this many bytes as
 * JSON (a Lambda answer is at most 6 MB, links and headers included); larger ones are null, and the
 * answer's `content_url` serves them (docs/inbound.md, "Reading").
 */
export const maxInlineBodyBytes = 4 * 1024 * 1024;

export function bodiesFitInline(content: InboundContent): boolean {
  const size = (part: string | null) => (part === null ? 0 : Buffer.byteLength(JSON.stringify(part)));
  return size(content.text) + size(content.html) + size(content.stripped_text_reply) <= maxInlineBodyBytes;
}

/**
 * One received message in full: the metadata, the bodies and headers, and time-limited URLs.
 * `urls.content` is set when the bodies are too large to answer inline (`bodiesFitInline`).
 */
export function inboundDetailsView(
  item: InboundItem,
  content: InboundContent | undefined,
  urls: { raw: string; attachments: string[]; expiresAt: Date; content?: string },
) {
  const summary = inboundSummaryView(item);
  const inline = urls.content === undefined;
  return {
    inbound_uuid: summary.inbound_uuid,
    received_at: summary.received_at,
    recipient: summary.recipient,
    from: summary.from,
    to: summary.to,
    cc: summary.cc,
    subject: summary.subject,
    message_id: summary.message_id,
    in_reply_to: summary.in_reply_to,
    reply_to_message_uuid: summary.reply_to_message_uuid,
    mailbox_hash: summary.mailbox_hash,
    text: inline ? (content?.text ?? null) : null,
    html: inline ? (content?.html ?? null) : null,
    stripped_text_reply: inline ? (content?.stripped_text_reply ?? null) : null,
    headers: content?.headers ?? [],
    attachments: summary.attachments.map((attachment, index) => ({
      ...attachment,
      url: urls.attachments[index] as string,
    })),
    raw_url: urls.raw,
    content_url: urls.content ?? null,
    expires_at: formatDate(urls.expiresAt),
    auth: summary.auth,
    spam: summary.spam,
    size: summary.size,
    parse_error: summary.parse_error,
  };
}
