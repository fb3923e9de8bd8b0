import MailComposer from 'nodemailer/lib/mail-composer';
import { reservedHeaders } from '../domain/messages/headers.ts';

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
}

/** `<uuid@tenant>`: the Message-ID on the sender's domain. */
export const messageIdFor = (messageUuid: string, tenant: string): string => `<${messageUuid}@${tenant}>`;

const toAddress = (address: MailAddress) => ({ name: address.name ?? '', address: address.email });

export async function composeMime(input: ComposeInput): Promise<Buffer> {
  const from = input.from.length > 0 ? input.from : [{ email: input.sender }];
  const senderInFrom = from.some((address) => address.email.toLowerCase() === input.sender.toLowerCase());
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (!reservedHeaders.has(name.toLowerCase()) && !/[\r\n]/.test(value)) headers[name] = value;
  }
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
    headers,
    ...(input.text === undefined ? {} : { text: input.text }),
    ...(input.html === undefined ? {} : { html: input.html }),
    attachments: input.attachments.map((attachment) => ({
      filename: attachment.filename,
      contentType: attachment.contentType,
      content: attachment.content,
    })),
  });
  return composer.compile().build();
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

/**
 * An EML is sent as given, with two exceptions: a Bcc header field is removed (blind copies travel
 * in the envelope only, and a Bcc header would show them to every recipient), and a Message-ID is
 * added when it has none (RFC 5322 says a message SHOULD have one; replies and bounces use it).
 */
export function prepareEml(eml: Buffer, messageId: string): Buffer {
  const end = headerEnd(eml);
  let raw = eml;
  if (end !== -1) {
    const head = eml.subarray(0, end).toString('latin1');
    const lines = head.split(/(?<=\n)/);
    const kept: string[] = [];
    let dropping = false;
    for (const line of lines) {
      if (/^[ \t]/.test(line)) {
        if (!dropping) kept.push(line);
        continue;
      }
      dropping = /^bcc[ \t]*:/i.test(line);
      if (!dropping) kept.push(line);
    }
    if (kept.length !== lines.length) {
      // The block before `end` never ends in a line break (the blank line follows), even when the
      // dropped field was the last one.
      const header = kept.join('').replace(/\r?\n$/, '');
      raw = Buffer.concat([Buffer.from(header, 'latin1'), eml.subarray(end)]);
    }
  }
  if (headerValue(raw, 'message-id') !== undefined) return raw;
  return Buffer.concat([Buffer.from(`Message-ID: ${messageId}\r\n`), raw]);
}
