import { getSigningKeysBySelector } from '../domains/dkim/index.ts';
import { objectKeys, recordDownloads } from '../messages/index.ts';
import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { presignObject, putObjects } from '../platform/objects/objects.ts';
import { formatDate } from '../platform/time/format.ts';
import type { Composition } from './compose-message.ts';
import { contentSettings } from './content-config.ts';
import { feedbackTagOf } from './feedback-id.ts';
import { loadComposer } from './load-composer.ts';
import type { SigningKey } from './mail/dkim-signer.ts';
import { configuredTransport } from './mail/transport.ts';
import {
  type ComposedRecord,
  type DeliveryMessage,
  getDeliveryMessage,
  MissingObjectError,
  readMessageContent,
} from './store/message-delivery.ts';

/**
 * POST /message/content-1.0 (docs/messages.md, "Content"): what a message says, taken apart from
 * the signed message itself, so that the parts shown are the parts the recipients got.
 *
 * A message the relay accepted is rebuilt from its composition record (time, signing keys, relay):
 * the same bytes it sent, without having stored them (an S3 PUT per sent message would cost more
 * than the rest of its writes). A message never sent is composed as it would be now, unsigned,
 * and answered as a preview (`preview: true`). The composed
 * message and each attachment are stored under the message's download keys and handed out as
 * presigned URLs valid for `CONTENT_URL_TTL_SECONDS`.
 */
export interface MessageContent {
  subject: string;
  text: string | null;
  html: string | null;
  headers: Array<{ name: string; value: string }>;
  attachments: Array<{ filename: string; content_type: string; size: number; url: string }>;
  raw_url: string | null;
  expires_at: string;
  /** Never sent: composed unsigned (a service signature is only ever on mail the service sent). */
  preview: boolean;
}

const notFound = () =>
  new ServiceError(Code.NotFound, 'No such message', {
    details: [{ field: 'message_uuid', message: 'Unknown message' }],
  });

export async function getMessageContent(
  uuid: string,
  account: string,
  now: Date = new Date(),
  recipient?: string,
): Promise<MessageContent> {
  const composer = loadComposer();
  const message = await getDeliveryMessage(uuid.toLowerCase());
  if (message === undefined || message.account_id !== account) throw notFound();
  const recipientIndex = recipient === undefined ? undefined : recipientPosition(message, recipient);
  const bodies = await readMessageContent(message).catch((error: unknown) => {
    if (!(error instanceof MissingObjectError)) throw error;
    throw new ServiceError(Code.MethodValidation, "The message's stored content is missing", {
      details: [{ field: 'message_uuid', message: 'The stored content of this message is missing' }],
    });
  });
  const { composition, exact, preview } = await compositionOf(message, now, recipientIndex);
  const { raw } = await (await composer).composeSignedMessage(message, bodies, composition);
  const parsed = await takeApart(raw);

  // Recorded first, so that deleting the message also removes what is about to be stored.
  const count = 1 + parsed.attachments.length;
  if (!(await recordDownloads(message.message_uuid, count))) throw notFound();
  const keyOf = (index: number) => objectKeys.download(message.message_uuid, index);
  await putObjects([
    ...(exact
      ? [
          {
            key: keyOf(0),
            body: raw,
            contentType: 'message/rfc822',
            downloadAs: `${message.message_uuid}.eml`,
          },
        ]
      : []),
    ...parsed.attachments.map((attachment, index) => ({
      key: keyOf(index + 1),
      body: attachment.bytes,
      contentType: attachment.content_type,
      downloadAs: attachment.filename,
    })),
  ]);
  const lifetime = contentSettings.urlTtlSeconds;
  const [rawUrl, ...attachmentUrls] = await Promise.all([
    exact ? presignObject(keyOf(0), lifetime) : Promise.resolve(null),
    ...parsed.attachments.map((_, index) => presignObject(keyOf(index + 1), lifetime)),
  ]);
  const inline = bodiesFit(parsed.text, parsed.html);
  return {
    subject: parsed.subject ?? message.subject ?? '',
    text: inline ? parsed.text : null,
    html: inline ? parsed.html : null,
    headers: headerFields(raw),
    attachments: parsed.attachments.map((attachment, index) => ({
      filename: attachment.filename,
      content_type: attachment.content_type,
      size: attachment.bytes.length,
      url: attachmentUrls[index] as string,
    })),
    raw_url: rawUrl ?? null,
    expires_at: formatDate(now.getTime() + lifetime * 1000),
    preview,
  };
}

/**
 * How to compose the message: as recorded when the relay accepted it, or, for a message never
 * sent (not yet, cancelled, failed), as the sender would now but unsigned: a preview, so the
 * service never hands out a DKIM signature over mail it did not send. `exact` is false when the
 * recorded send cannot be rebuilt: a key that signed it was deleted after its retention, or the
 * message was sent before compositions were recorded. Its parts are still shown (they do not
 * depend on the signature), without the signed message.
 */
async function compositionOf(
  message: DeliveryMessage,
  now: Date,
  recipientIndex: number | undefined,
): Promise<{ composition: Composition; exact: boolean; preview: boolean }> {
  const record = message.composed;
  const feedbackTag = await feedbackTagOf(message.account_id);
  if (record === undefined) {
    const sent = message.relay !== undefined;
    return {
      composition: { at: now, keys: [], transport: configuredTransport(), feedbackTag },
      exact: !sent,
      preview: !sent,
    };
  }
  const copy = trackedCopyOf(record, recipientIndex);
  const selectors = copy === undefined ? record.selectors : copy.selectors;
  const keys: SigningKey[] | undefined =
    selectors === undefined ? [] : await getSigningKeysBySelector(message.tenant, selectors);
  return {
    composition: {
      at: new Date(copy?.at ?? record.at),
      keys: keys ?? [],
      transport: record.transport,
      feedbackTag,
      ...(record.unsubscribe_url === undefined ? {} : { unsubscribeUrl: record.unsubscribe_url }),
      ...(copy === undefined || record.tracking === undefined
        ? {}
        : { tracking: { settings: record.tracking, recipientIndex: copy.recipient } }),
    },
    exact: keys !== undefined,
    preview: false,
  };
}

/**
 * Which copy of a tracked message to rebuild (docs/tracking.md): the named recipient's, else the
 * first recipient's the relay accepted. A recipient who got no copy (refused, suppressed) is shown
 * the copy composed for them with the last attempt's facts. Undefined for untracked mail, whose
 * recipients all got the same bytes.
 */
function trackedCopyOf(
  record: ComposedRecord,
  recipientIndex: number | undefined,
): { recipient: number; at: string; selectors?: string[] } | undefined {
  if (record.tracking === undefined) return undefined;
  const copies = record.copies ?? [];
  const wanted =
    recipientIndex ?? (copies.length === 0 ? 0 : Math.min(...copies.map((copy) => copy.recipient)));
  const sent = copies.find((copy) => copy.recipient === wanted);
  if (sent !== undefined) return sent;
  return {
    recipient: wanted,
    at: record.at,
    ...(record.selectors === undefined ? {} : { selectors: record.selectors }),
  };
}

/** The position of `email` among the message's recipients (to, cc, bcc in order); 107 if it is none of them. */
function recipientPosition(message: DeliveryMessage, email: string): number {
  const address = email.toLowerCase();
  const index = message.recipients.findIndex((recipient) => recipient.email.toLowerCase() === address);
  if (index !== -1) return index;
  throw new ServiceError(Code.InvalidInput, 'Not a recipient of this message', {
    details: [{ field: 'recipient', message: "Not one of the message's recipients (to, cc or bcc)" }],
  });
}

interface ParsedMessage {
  subject: string | undefined;
  text: string | null;
  html: string | null;
  attachments: Array<{ filename: string; content_type: string; bytes: Buffer }>;
}

/** The parts of the signed message, by postal-mime (loaded on first use, as for EML input). */
async function takeApart(raw: Buffer): Promise<ParsedMessage> {
  const { default: PostalMime } = await import('postal-mime');
  const email = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer' });
  return {
    subject: email.subject,
    text: email.text ?? null,
    html: email.html ?? null,
    attachments: email.attachments.map((attachment, index) => ({
      filename: attachment.filename ?? `attachment-${index + 1}`,
      content_type: attachment.mimeType,
      bytes: Buffer.from(attachment.content as ArrayBuffer),
    })),
  };
}

/**
 * Text and HTML are answered inline while they take at most `maxInlineJsonBytes` as JSON (a Lambda
 * answer is at most 6 MB); larger bodies are null and read from `raw_url`.
 */
export const maxInlineJsonBytes = 4 * 1024 * 1024;

function bodiesFit(text: string | null, html: string | null): boolean {
  const size = (part: string | null) => (part === null ? 0 : Buffer.byteLength(JSON.stringify(part)));
  return size(text) + size(html) <= maxInlineJsonBytes;
}

/**
 * The header fields of the message in order, as sent: names as written, values unfolded and not
 * decoded (an encoded-word stays as it is; `subject` is the decoded subject).
 */
export function headerFields(raw: Buffer): Array<{ name: string; value: string }> {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end === -1 ? raw.length : end).toString('utf8');
  const fields: Array<{ name: string; value: string }> = [];
  for (const line of head.split('\r\n')) {
    const last = fields[fields.length - 1];
    if (/^[ \t]/.test(line) && last !== undefined) {
      last.value += line;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    fields.push({ name: line.slice(0, colon).trimEnd(), value: line.slice(colon + 1).trimStart() });
  }
  return fields;
}
