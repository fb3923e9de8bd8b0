import { createHash } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import { isTraceHeader, refusedHeaderReason } from '../../platform/mail/headers.ts';
import { textFromHtml } from '../../platform/mail/text-from-html.ts';

/**
 * MIME composition with nodemailer's composer. Bcc never reaches the headers: the composer is not
 * given bcc at all, the recipients travel in the SMTP envelope (or the SES destination) only.
 */
export interface MailAddress {
  email: string;
  name?: string;
}

export interface ComposeInput {
  messageId: string;
  sender: string;
  from: MailAddress[];
  to: MailAddress[];
  cc: MailAddress[];
  replyTo: MailAddress[];
  subject?: string;
  headers?: Record<string, string>;
  text?: string;
  html?: string;
  attachments: Array<{ filename: string; contentType: string; content: Buffer }>;
  date?: Date;
  /** `Feedback-ID` value (shared/delivery/mail/envelope.ts). */
  feedbackId?: string;
  /**
   * The shared part of the MIME boundaries (`mimeBoundaryFor`). Given, the composition is a pure
   * function of its input: the same message composes to the same bytes again (docs/messages.md,
   * "Content"). Without it nodemailer draws random boundaries.
   */
  boundary?: string;
}

/**
 * The boundary base of a message: 16 hex digits derived from its uuid, so that composing the
 * message again yields the same bytes, and no one can put the boundary into a body beforehand
 * (the uuid is drawn when the message is accepted, after its bodies were written).
 */
export const mimeBoundaryFor = (messageUuid: string): string =>
  createHash('sha256').update(`mime-boundary:${messageUuid}`).digest('hex').slice(0, 16);

/** `<uuid@tenant>`: the Message-ID on the sender's domain. */
export const messageIdFor = (messageUuid: string, tenant: string): string => `<${messageUuid}@${tenant}>`;

const toAddress = (address: MailAddress) => ({ name: address.name ?? '', address: address.email });

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"]/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[char] ?? char,
  );

/**
 * A complete HTML document for the part: a fragment (no `<html>` element) is wrapped in a document
 * that declares UTF-8 and carries the subject as its title, so every client renders it in standards
 * mode with the right encoding. A complete document is left as the caller wrote it.
 */
export function completeHtmlDocument(html: string, subject = ''): string {
  if (/<html[\s>]/i.test(html)) return html;
  return [
    '<!DOCTYPE html>',
    '<html>',
    '<head>',
    '<meta charset="utf-8">',
    '<meta http-equiv="Content-Type" content="text/html; charset=utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(subject)}</title>`,
    '</head>',
    '<body>',
    html,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * The content type of an attachment with its charset: a `text/*` type without one gets `utf-8`
 * when the bytes are valid UTF-8 (ASCII included), else `iso-8859-1`, the only charset in which
 * every byte sequence is valid (RFC 2046 4.1.2: the charset of text must be known to read it).
 * A charset the caller gave is kept, and other types have none.
 */
export function attachmentContentType(contentType: string, content: Buffer): string {
  if (!/^\s*text\//i.test(contentType) || /;\s*charset\s*=/i.test(contentType)) return contentType;
  let charset = 'utf-8';
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    charset = 'iso-8859-1';
  }
  return `${contentType.trim().replace(/;\s*$/, '')}; charset=${charset}`;
}

/**
 * Line breaks as CRLF (RFC 5322 2.3: CR and LF occur only together). The composer passes 7bit text
 * through as it is, and a bare LF on the wire is refused by strict receivers (or repaired by a relay
 * after signing).
 */
const crlf = (text: string) => text.replace(/\r?\n|\r/g, '\r\n');

/**
 * The MIME message. nodemailer's composer encodes non-ASCII subjects and display names as RFC 2047
 * encoded-words, non-ASCII file names as RFC 2231 parameters (and encoded-words for the `name`
 * that older clients read), declares `charset=utf-8` on the text and HTML parts and picks
 * quoted-printable or base64 by content. HTML-only content gets a text alternative derived from
 * the HTML (multipart/alternative), and an HTML fragment is wrapped in a complete document.
 */
export async function composeMime(input: ComposeInput): Promise<Buffer> {
  const from = input.from.length > 0 ? input.from : [{ email: input.sender }];
  const senderInFrom = from.some((address) => address.email.toLowerCase() === input.sender.toLowerCase());
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (refusedHeaderReason(name) === undefined && !/[\r\n]/.test(value)) headers[name] = value;
  }
  if (input.feedbackId !== undefined) {
    for (const name of Object.keys(headers)) if (name.toLowerCase() === 'feedback-id') delete headers[name];
    headers['Feedback-ID'] = input.feedbackId;
  }
  const html = input.html === undefined ? undefined : crlf(completeHtmlDocument(input.html, input.subject));
  const plain = input.text ?? (input.html === undefined ? undefined : await textFromHtml(input.html));
  const text = plain === undefined ? undefined : crlf(plain);
  const composer = new MailComposer({
    from: from.length === 1 ? toAddress(from[0] as MailAddress) : from.map(toAddress),
    // RFC 5322 3.6.2: several authors, or an author other than the sending address, need a Sender.
    ...(from.length > 1 || !senderInFrom ? { sender: input.sender } : {}),
    to: input.to.map(toAddress),
    cc: input.cc.map(toAddress),
    replyTo: input.replyTo.map(toAddress),
    subject: input.subject ?? '',
    messageId: input.messageId,
    date: input.date ?? new Date(),
    ...(input.boundary === undefined ? {} : { baseBoundary: input.boundary }),
    headers,
    ...(text === undefined ? {} : { text }),
    ...(html === undefined ? {} : { html }),
    attachments: input.attachments.map((attachment) => ({
      filename: attachment.filename,
      contentType: attachmentContentType(attachment.contentType, attachment.content),
      content: attachment.content,
    })),
  });
  return composer.compile().build();
}

/**
 * The message as an SMTP relay receives it: every bare CR or LF becomes CRLF and the message ends
 * with CRLF, which is what nodemailer's DATA stream does on the wire (and SES requires). The
 * sender signs this form, so the DKIM signature covers the bytes the receiver gets, and the
 * message can be rebuilt byte for byte (docs/messages.md, "Content").
 */
export function wireForm(raw: Buffer): Buffer {
  const text = raw.toString('latin1');
  const normalised = text.replace(/\r\n|\r|\n/g, '\r\n');
  const ended = normalised.endsWith('\r\n') ? normalised : `${normalised}\r\n`;
  return ended === text ? raw : Buffer.from(ended, 'latin1');
}

/** End of the header section of a raw message (index of the blank line), or -1. */
function headerEnd(raw: Buffer): number {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf === -1) return lf;
  if (lf === -1) return crlf;
  return Math.min(crlf, lf);
}

/** The value of one header field of a raw message (first occurrence, unfolded), if present. */
export function headerValue(raw: Buffer, name: string): string | undefined {
  const end = headerEnd(raw);
  const head = raw.subarray(0, end === -1 ? raw.length : end).toString('utf8');
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const pattern = new RegExp(`^${name.replace(/[-]/g, '\\-')}:[ \\t]*(.*)$`, 'im');
  return unfolded.match(pattern)?.[1]?.trim();
}

/** RFC 5322 date-time in UTC: `Mon, 23 Nov 2026 10:15:00 +0000`. */
export function rfc5322Date(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}

/** A Date header more than this far from the time of sending is replaced by the time of sending. */
export const maxDateSkewMs = 60 * 60 * 1000;

export interface PrepareEmlOptions {
  /** The time of sending (Date when missing or more than an hour off). */
  now?: Date;
  /** The service's `Feedback-ID`, replacing the EML's own. */
  feedbackId?: string;
  /** Header fields the service sets (a broadcast's list headers), replacing the EML's own. */
  serviceHeaders?: Record<string, string>;
}

/** The name of a raw header field (`Name: value…`), or '' for a line without a colon. */
function fieldName(field: string): string {
  const colon = field.indexOf(':');
  return colon === -1 ? '' : field.slice(0, colon);
}

/**
 * An EML is sent as given, except:
 * - a Bcc header field is removed (blind copies travel in the envelope only, and a Bcc header would
 *   show them to every recipient);
 * - a Message-ID is added when it has none (RFC 5322 says a message SHOULD have one; replies and
 *   bounces use it);
 * - a Date is added when it has none (RFC 5322 requires one), and a Date that cannot be read or is
 *   more than an hour away from the time of sending is replaced by the time of sending (spam
 *   filters score a date in the past or the future);
 * - its Feedback-ID, if any, is replaced by the service's;
 * - trace and authentication fields (`Received`, `Return-Path`, `Resent-*`, `Authentication-Results`,
 *   `ARC-*`, `DKIM-Signature`, `X-SES-*`) are removed: they are for servers and verifiers to write.
 * Every other header field stays byte for byte as given. The DKIM signature then covers it.
 */
export function prepareEml(eml: Buffer, messageId: string, options: PrepareEmlOptions = {}): Buffer {
  const now = options.now ?? new Date();
  const end = headerEnd(eml);
  // Without a blank line the whole EML is its header section (a message without a body).
  const head = (end === -1 ? eml : eml.subarray(0, end)).toString('latin1').replace(/\r?\n$/, '');
  const newline = /\n/.test(head) && !/\r\n/.test(head) ? '\n' : '\r\n';
  const body = end === -1 ? Buffer.from(newline + newline) : eml.subarray(end);
  // One entry per header field: its first line and its continuation lines.
  const fields: string[] = [];
  for (const line of head === '' ? [] : head.split(/(?<=\n)/)) {
    if (/^[ \t]/.test(line) && fields.length > 0) fields[fields.length - 1] += line;
    else fields.push(line);
  }
  const named = (name: string) => (field: string) => new RegExp(`^${name}[ \\t]*:`, 'i').test(field);
  // Bcc never leaves; trace and authentication fields (Received, ARC-*, DKIM-Signature, …) are the
  // servers' and verifiers' to write, never the sender's (shared/platform/mail/headers.ts).
  // The service's Feedback-ID replaces the EML's own: on a shared platform a tenant must not file
  // its complaints under another tenant's tag (docs/deliverability.md, "Feedback-ID").
  const serviceNames = Object.keys(options.serviceHeaders ?? {});
  const replaced = (field: string) =>
    (options.feedbackId !== undefined && named('feedback-id')(field)) ||
    serviceNames.some((name) => named(name)(field));
  const kept = fields.filter(
    (field) => !named('bcc')(field) && !isTraceHeader(fieldName(field)) && !replaced(field),
  );
  const added: string[] = [];
  const dateIndex = kept.findIndex(named('date'));
  const dateField = dateIndex === -1 ? undefined : kept[dateIndex];
  const fresh = `Date: ${rfc5322Date(now)}`;
  if (dateField === undefined) {
    added.push(fresh);
  } else {
    const given = Date.parse(
      dateField
        .replace(/^date[ \t]*:/i, '')
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim(),
    );
    if (Number.isNaN(given) || Math.abs(given - now.getTime()) > maxDateSkewMs) {
      kept[dateIndex] = `${fresh}${/\r?\n$/.test(dateField) ? newline : ''}`;
    }
  }
  if (!kept.some(named('message-id'))) added.push(`Message-ID: ${messageId}`);
  if (options.feedbackId !== undefined) added.push(`Feedback-ID: ${options.feedbackId}`);
  for (const [name, value] of Object.entries(options.serviceHeaders ?? {})) added.push(`${name}: ${value}`);
  if (added.length === 0 && kept.length === fields.length && kept[dateIndex] === dateField) return eml;
  // The block before `end` never ends in a line break (the blank line follows), even when the
  // dropped field was the last one.
  const header = kept.join('').replace(/\r?\n$/, '');
  const prefix = added.map((line) => `${line}${newline}`).join('');
  return Buffer.concat([Buffer.from(prefix, 'latin1'), Buffer.from(header, 'latin1'), body]);
}
