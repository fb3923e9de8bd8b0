import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import libmime from 'libmime';
import { type AddressObject, type AttachmentStream, type EmailAddress, MailParser } from 'mailparser';
import { HtmlToTextLimitError, textFromHtml } from '../platform/mail/text-from-html.ts';
import { clip, clipAddress, clipAddresses, inboundLimits, type StoredAddress } from './model/inbound.ts';
import { inboundParseLimits } from './parse-limits.ts';

/**
 * Parses a received message as a stream (docs/inbound.md, "Parsing"): mailparser (the nodemailer
 * family's streaming MIME parser: charsets through libmime and iconv-lite, RFC 2047/2231 words,
 * nested multiparts) reads it in chunks and hands over each attachment as a stream of its decoded
 * bytes, which `storeAttachment` streams to storage before the parser goes on. So neither the message
 * nor an attachment is ever held whole: memory is a few upload parts, plus the text and HTML bodies.
 *
 * "Cannot be parsed" means: the parser gave up (a header block over its limit …), the message's
 * header section is not RFC 5322 (empty, or a line that is not `Name: value`: binary junk, a body
 * without headers), or it is past a budget of ./parse-limits.ts (the deadline, MIME parts, HTML
 * length or depth). Then only `parseError` is set, and the caller keeps the raw message alone. On
 * any of these the attachment streams still open are destroyed, so that no upload waits forever for
 * bytes the parser will never send.
 */
export interface ParsedMessage {
  from?: StoredAddress;
  to: StoredAddress[];
  cc: StoredAddress[];
  subject?: string;
  messageId?: string;
  inReplyTo?: string;
  references?: string;
  text: string | null;
  html: string | null;
  headers: Array<{ name: string; value: string }>;
  attachments: Array<{ filename: string; content_type: string; size: number; key: string }>;
  /** Attachments past `inboundLimits.attachments`: read and dropped (the raw message has them). */
  attachmentsOmitted: number;
  parseError?: string;
}

/** Stores one decoded attachment (a stream); resolves with its object key and size. */
export type AttachmentStore = (
  index: number,
  content: Readable,
  meta: { filename: string; contentType: string },
) => Promise<{ key: string; size: number }>;

const headerLineShape = /^[\x21-\x39\x3b-\x7e]+[ \t]*:/;

function addressesOf(value: unknown): EmailAddress[] {
  const objects = (Array.isArray(value) ? value : value === undefined ? [] : [value]) as AddressObject[];
  const flat: EmailAddress[] = [];
  const walk = (entries: EmailAddress[]) => {
    for (const entry of entries) {
      if (entry.group !== undefined) walk(entry.group);
      else if (entry.address !== undefined) flat.push(entry);
    }
  };
  for (const object of objects) walk(object?.value ?? []);
  return flat;
}

const toStored = (entry: EmailAddress) => ({ email: entry.address ?? '', name: entry.name });

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.filter((part) => typeof part === 'string').join(' ');
  return undefined;
}

/** `Name: value` lines, unfolded, with encoded words decoded. */
function headerList(lines: ReadonlyArray<{ key: string; line: string }>) {
  return lines.map(({ line }) => {
    const colon = line.indexOf(':');
    const raw = line
      .slice(colon + 1)
      .replace(/\r?\n(?=[ \t])/g, '')
      .trim();
    let value = raw;
    try {
      value = libmime.decodeWords(raw);
    } catch {
      // An undecodable word stays as it was sent.
    }
    return { name: line.slice(0, colon).trim(), value };
  });
}

/** Reads a stream to its end and forgets it (an attachment that is not kept). */
async function drain(stream: Readable): Promise<void> {
  for await (const _chunk of stream);
}

/** Nothing parsed yet (and all that is kept of a message that cannot be parsed). */
const nothingParsed = (): ParsedMessage => ({
  to: [],
  cc: [],
  text: null,
  html: null,
  headers: [],
  attachments: [],
  attachmentsOmitted: 0,
});

/** Why parsing stopped early: a budget of ./parse-limits.ts (a parse error, not a failure to retry). */
class ParseStopped extends Error {
  override readonly name = 'ParseStopped';
}

/** mailsplit's words for its part limit, as `parse_error` says them. */
const partsExceeded = /Max allowed child nodes exceeded/;

export async function parseMessage(
  raw: Readable,
  storeAttachment: AttachmentStore,
  limits: { deadlineMs: number } = { deadlineMs: inboundParseLimits.deadlineMs },
): Promise<ParsedMessage> {
  const parsed = nothingParsed();
  const parser = new MailParser({
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
    // The text of an HTML-only message is derived below, by the bounded conversion.
    skipHtmlToText: true,
    // MIME parts at most (mailsplit counts every node, nested ones included).
    maxChildNodes: inboundParseLimits.parts,
    // The attachments' checksums are not used: no hashing of every byte.
    checksumAlgo: false,
  } as ConstructorParameters<typeof MailParser>[0]);
  let rootSeen = false;
  let attachmentIndex = 0;
  const pending: Promise<void>[] = [];
  const openAttachments = new Set<Readable>();
  let stopped: string | undefined;
  let storeError: { error: unknown } | undefined;

  let ended = false;
  /** Ends the parse early: the source, and every attachment stream still being stored. */
  const stop = (reason: string, budget = true) => {
    if (ended) return;
    ended = true;
    if (budget) stopped = reason;
    // Destroyed without an error: a stream nobody reads yet would throw it as unhandled.
    for (const stream of openAttachments) stream.destroy();
    raw.destroy(new ParseStopped(reason));
  };
  const deadline = setTimeout(
    () => stop(`the message was not parsed within ${limits.deadlineMs / 1000} s`),
    limits.deadlineMs,
  );
  deadline.unref?.();

  parser.on('headerLines', (lines: ReadonlyArray<{ key: string; line: string }>) => {
    if (rootSeen) return;
    rootSeen = true;
    const bad = lines.findIndex(({ line }) => !headerLineShape.test(line));
    if (lines.length === 0 || bad !== -1) {
      parsed.parseError =
        lines.length === 0
          ? 'the message has no header section'
          : `the header section is not RFC 5322: line ${bad + 1} is not "Name: value"`;
      return;
    }
    parsed.headers = headerList(lines);
  });
  parser.on('headers', (headers: Map<string, unknown>) => {
    if (parsed.parseError !== undefined || parsed.subject !== undefined || parsed.from !== undefined) return;
    const from = addressesOf(headers.get('from'))[0];
    if (from !== undefined) parsed.from = clipAddress(toStored(from));
    parsed.to = clipAddresses(addressesOf(headers.get('to')).map(toStored));
    parsed.cc = clipAddresses(addressesOf(headers.get('cc')).map(toStored));
    const subject = headerText(headers.get('subject'));
    if (subject !== undefined) parsed.subject = clip(subject, inboundLimits.subjectLength);
    const messageId = headerText(headers.get('message-id'));
    if (messageId !== undefined) parsed.messageId = clip(messageId, inboundLimits.messageIdLength);
    const inReplyTo = headerText(headers.get('in-reply-to'));
    if (inReplyTo !== undefined) parsed.inReplyTo = clip(inReplyTo, inboundLimits.messageIdLength);
    const references = headerText(headers.get('references'));
    if (references !== undefined) parsed.references = references;
  });
  parser.on('data', (data: AttachmentStream | { type: 'text'; text?: string; html?: string | false }) => {
    if (data.type === 'text') {
      if (typeof data.text === 'string') parsed.text = data.text;
      if (typeof data.html === 'string') {
        if (data.html.length > inboundParseLimits.htmlLength) {
          stop(
            `the HTML part has ${data.html.length} characters; at most ${inboundParseLimits.htmlLength} are parsed`,
          );
          return;
        }
        parsed.html = data.html;
      }
      return;
    }
    const attachment = data;
    const index = attachmentIndex++;
    openAttachments.add(attachment.content);
    // Each attachment is read and stored before the parser is released to the next part, so they
    // are stored one at a time, in order.
    const work = (async () => {
      try {
        if (ended) {
          attachment.content.destroy();
          return;
        }
        if (parsed.parseError !== undefined || index >= inboundLimits.attachments) {
          if (parsed.parseError === undefined) parsed.attachmentsOmitted += 1;
          await drain(attachment.content);
          return;
        }
        const filename = clip(attachment.filename ?? `attachment-${index + 1}`, inboundLimits.filenameLength);
        const contentType = clip(
          attachment.contentType ?? 'application/octet-stream',
          inboundLimits.contentTypeLength,
        );
        const { key, size } = await storeAttachment(index, attachment.content, { filename, contentType });
        parsed.attachments.push({ filename, content_type: contentType, size, key });
      } catch (error) {
        // A stream destroyed because parsing stopped is part of the parse error; anything else is a
        // storage failure: the parse stops, and the caller retries the whole message.
        if (!ended) {
          storeError ??= { error };
          stop('an attachment could not be stored', false);
        }
      } finally {
        openAttachments.delete(attachment.content);
        attachment.release?.();
      }
    })();
    pending.push(work);
  });

  // Reading and storing failures are not parse errors: the caller retries the whole message.
  let sourceError: unknown;
  raw.once('error', (error) => {
    if (!(error instanceof ParseStopped)) sourceError = error;
  });
  let parseFailure: unknown;
  try {
    await pipeline(raw, parser);
  } catch (error) {
    parseFailure = error;
    // The parser gave up: the attachments it will never finish are ended here.
    ended = true;
    for (const stream of openAttachments) stream.destroy();
  }
  await Promise.all(pending);
  clearTimeout(deadline);
  if (storeError !== undefined) throw storeError.error;
  if (sourceError !== undefined) throw sourceError;
  if (parseFailure !== undefined && parsed.parseError === undefined) {
    const message = parseFailure instanceof Error ? parseFailure.message : String(parseFailure);
    parsed.parseError =
      stopped ??
      (partsExceeded.test(message)
        ? `the message has more than ${inboundParseLimits.parts} MIME parts`
        : `the message could not be parsed: ${message}`);
  } else if (stopped !== undefined && parsed.parseError === undefined) {
    parsed.parseError = stopped;
  }
  // mailparser leaves the text empty for HTML-only mail (its own conversion is skipped, unbounded).
  if (parsed.parseError === undefined && (parsed.text ?? '') === '' && parsed.html !== null) {
    try {
      parsed.text = await textFromHtml(parsed.html);
    } catch (error) {
      if (!(error instanceof HtmlToTextLimitError || error instanceof RangeError)) throw error;
      parsed.parseError =
        error instanceof RangeError
          ? 'the HTML part is too complex to convert to text'
          : `the HTML part: ${error.message}`;
    }
  }
  if (parsed.parseError !== undefined) {
    return { ...nothingParsed(), parseError: clip(parsed.parseError, inboundLimits.parseErrorLength) };
  }
  return parsed;
}
