import * as z from 'zod/mini';
import { Code } from '../platform/errors/catalogue.ts';
import { incomingDate, serverDate } from '../platform/schemas/dates.ts';
import { describe, documented } from '../platform/schemas/describe.ts';
import { lookupOrPage, lookupOrPageKeywords, pageLimit } from '../platform/schemas/lookup-or-page.ts';
import { parseSuppressedAddress } from '../suppressions/index.ts';
import { authVerdicts, spamVerdicts } from './model/receipt.ts';

/**
 * Request and response schemas of the inbound routes (docs/inbound.md), the single source for
 * validation, types and the OpenAPI document. Requests are strict: an unknown field is 107.
 */
export const maxInboundLimit = 1000;

const inboundUuid = describe(
  z.string({ error: 'inbound_uuid must be a string' }).check(z.guid('inbound_uuid must be a UUID')),
  'A received message, as the inbound.received event and the list name it',
  '5d0f3c2a-9b1e-8c4d-a2f0-6e7d8c9b0a1f',
);

/** An address filter: parsed like any address, compared lower-cased (the stored form). */
const addressFilter = (what: string, description: string) =>
  describe(
    z.pipe(
      z.string({ error: `${what} must be an address` }),
      z.transform((value, context): string => {
        const parsed = parseSuppressedAddress(value);
        if (parsed.ok) return parsed.email;
        context.issues.push({
          code: 'custom',
          message: parsed.message,
          input: value,
          params: { catalogueCode: Code.InvalidEmail },
        });
        return z.NEVER;
      }),
    ),
    description,
    'support@example.test',
  );

export const inboundFilters = z
  .strictObject({
    date_from: z.optional(
      incomingDate('date_from', 'date_from: ISO 8601 with an offset; bounds received_at (inclusive)'),
    ),
    date_to: z.optional(
      incomingDate('date_to', 'date_to: ISO 8601 with an offset; bounds received_at (inclusive)'),
    ),
    recipient: z.optional(
      addressFilter(
        'recipient',
        'Only mail received for this address (the envelope recipient, exact, case-insensitive)',
      ),
    ),
    sender: z.optional(
      addressFilter('sender', 'Only mail whose From address is this one (exact, case-insensitive)'),
    ),
    limit: z.optional(pageLimit(maxInboundLimit)),
  })
  .check(
    z.refine((filters) => filters.recipient === undefined || filters.sender === undefined, {
      message: 'Give recipient or sender, not both (each is its own index)',
      path: ['sender'],
    }),
  );

export const inboundQueryRequest = describe(
  z
    .strictObject({
      inbound_uuid: z.optional(inboundUuid),
      filters: z.optional(inboundFilters),
      cursor: z.optional(
        z.string({ error: 'cursor must be a string' }).check(z.maxLength(4096, 'cursor is too long')),
      ),
    })
    .check(lookupOrPage('inbound_uuid')),
  'Either {inbound_uuid} for one received message in full, or {filters, cursor} for a page of received mail, newest first',
);
documented(inboundQueryRequest, lookupOrPageKeywords('inbound_uuid'));

export type InboundQueryRequest = z.infer<typeof inboundQueryRequest>;

export const inboundDeleteRequest = describe(
  z.strictObject({ inbound_uuid: inboundUuid }),
  'The received message to delete, with its stored content',
);
export type InboundDeleteRequest = z.infer<typeof inboundDeleteRequest>;

const address = describe(
  z.object({ email: z.string(), name: z.nullable(z.string()) }),
  'An address as the message gave it',
);
const authVerdict = z.enum(authVerdicts);

const summaryFields = {
  inbound_uuid: z.string(),
  received_at: serverDate('When the mail was received'),
  recipient: describe(z.string(), 'The envelope recipient (RCPT TO) it was received for, lower-cased'),
  from: describe(z.nullable(address), 'The From address, or null when the message has none'),
  to: z.array(address),
  cc: z.array(address),
  subject: z.string(),
  message_id: describe(z.nullable(z.string()), 'The Message-ID header'),
  in_reply_to: describe(z.nullable(z.string()), 'The In-Reply-To header'),
  reply_to_message_uuid: describe(
    z.nullable(z.string()),
    'Your own sent message this one answers (matched by In-Reply-To / References), or null',
  ),
  mailbox_hash: describe(z.nullable(z.string()), "The part after '+' in the recipient's local part, or null"),
  auth: describe(
    z.object({ spf: authVerdict, dkim: authVerdict, dmarc: authVerdict }),
    'SPF, DKIM and DMARC as the receiving side checked them: pass, fail, none (no record or signature) or error',
  ),
  spam: describe(
    z.object({ verdict: z.enum(spamVerdicts), score: z.optional(z.number()) }),
    'The spam verdict (SES); not_scanned where no scanner ran (the local host)',
  ),
  size: describe(z.number(), 'Size of the message as received, in bytes'),
  parse_error: describe(
    z.nullable(z.string()),
    'Why the message could not be parsed (it is kept raw: raw_url), or null',
  ),
};

export const inboundSummary = z.object({
  ...summaryFields,
  attachments: z.array(z.object({ filename: z.string(), content_type: z.string(), size: z.number() })),
});

export const inboundDetails = z.object({
  ...summaryFields,
  text: describe(
    z.nullable(z.string()),
    'The text part (for HTML-only mail: the text derived from the HTML); null when there is none, or when text, HTML and stripped_text_reply together exceed 4 MB (then read them from content_url)',
  ),
  html: describe(z.nullable(z.string()), 'The HTML part; null when there is none, or too large (see text)'),
  stripped_text_reply: describe(
    z.nullable(z.string()),
    'The text without the quoted message, the "On … wrote:" line and the signature; null when there is none, or too large (see text)',
  ),
  content_url: describe(
    z.nullable(z.string()),
    'When the bodies are too large to answer inline: a GET URL, valid until expires_at, of a JSON object with text, html, stripped_text_reply and headers; null otherwise',
  ),
  headers: z.array(z.object({ name: z.string(), value: z.string() })),
  attachments: z.array(
    z.object({
      filename: z.string(),
      content_type: z.string(),
      size: z.number(),
      url: describe(z.string(), 'Time-limited download URL (until expires_at)'),
    }),
  ),
  raw_url: describe(z.string(), 'Time-limited URL of the message exactly as received (until expires_at)'),
  expires_at: serverDate('When the URLs stop working (one hour)'),
});

export const inboundQueryResponse = z.union([
  inboundDetails,
  z.object({
    inbound: z.array(inboundSummary),
    count: describe(z.number(), 'Number of received messages in this page'),
    next_cursor: describe(
      z.nullable(z.string()),
      'Pass as `cursor` (with the same filters) for the next page; null at the end',
    ),
  }),
]);

export const inboundDeleteResponse = z.object({ inbound_uuid: z.string(), deleted: z.literal(true) });
