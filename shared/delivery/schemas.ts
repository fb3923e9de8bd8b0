import * as z from 'zod/mini';
import { serverDate } from '../platform/schemas/dates.ts';
import { describe } from '../platform/schemas/describe.ts';
import { uuid } from '../platform/schemas/uuid.ts';

/** Request and response of POST /message/content-1.0: a message as it was (or will be) sent. */

const isoDate = serverDate('ISO 8601 with the server time zone offset');

export const messageContentRequest = describe(
  z.strictObject({
    message_uuid: uuid('message_uuid'),
    recipient: z.optional(
      describe(
        z.email({ error: 'recipient must be an e-mail address' }),
        "For tracked mail, whose recipients each got their own copy: the recipient (to, cc or bcc) whose copy to return; without it, the first recipient's. Untracked mail is the same for every recipient",
        'ada@example.org',
      ),
    ),
  }),
  'One of your messages: {message_uuid}, and for tracked mail optionally the recipient whose copy to return',
);

export type MessageContentRequest = z.infer<typeof messageContentRequest>;

export const messageContentResponse = z.object({
  subject: describe(z.string(), 'The subject, decoded'),
  text: describe(
    z.nullable(z.string()),
    'The text part as sent (for HTML-only content: the text derived from the HTML); null when there is none, or when text and HTML together exceed 4 MB (read them from raw_url)',
  ),
  html: describe(
    z.nullable(z.string()),
    'The HTML part as sent (a fragment arrives wrapped in a complete document); null when there is none, or too large (see text)',
  ),
  headers: describe(
    z.array(z.object({ name: z.string(), value: z.string() })),
    'Every header field of the message, in order, DKIM-Signature included when it was signed: values unfolded, not decoded',
  ),
  attachments: z.array(
    z.object({
      filename: z.string(),
      content_type: z.string(),
      size: describe(z.number(), 'Bytes'),
      url: describe(z.string(), 'A GET URL of the attachment, valid until expires_at'),
    }),
  ),
  raw_url: describe(
    z.nullable(z.string()),
    'A GET URL, valid until expires_at, of the signed message exactly as sent (RFC 5322, message/rfc822), or, for a preview, the message composed unsigned; null when a sent message can no longer be rebuilt (a DKIM key that signed it was deleted after its retention)',
  ),
  preview: describe(
    z.boolean(),
    'true when the message was never sent (not sent yet, cancelled or failed): it is composed as it would be sent, but not DKIM-signed; false for a message the relay accepted',
  ),
  expires_at: describe(isoDate, 'When the URLs stop working'),
});
