import * as z from 'zod/mini';
import { Code } from '../platform/errors/catalogue.ts';
import { type Address, hasLineBreak, parseAddress } from '../platform/mail/addresses.ts';
import {
  customHeaderBytes,
  maxCustomHeaderBytes,
  maxCustomHeaders,
  maxSubjectLength,
  refusedHeaderReason,
} from '../platform/mail/headers.ts';
import { base64 } from '../platform/schemas/base64.ts';
import { incomingDate, serverDate } from '../platform/schemas/dates.ts';
import { describe, documented, requiredTogether } from '../platform/schemas/describe.ts';
import { registerUnknownFieldHint } from '../platform/schemas/field-hints.ts';
import { lookupOrPage, lookupOrPageKeywords, pageLimit } from '../platform/schemas/lookup-or-page.ts';
import { uuid } from '../platform/schemas/uuid.ts';
import { messageTemplate, messageTemplateRecord } from '../templates/index.ts';
import { foreignFieldHint } from './model/foreign-fields.ts';
import { metadataLimits, tagLimits, tagListProblems } from './model/labels.ts';
import { messageStatuses, schedulingModes } from './model/statuses.ts';
import { listIdProblem, messageStreams } from './model/stream.ts';

/**
 * Request and response schemas of the three message routes (docs/messages.md), the single
 * source for validation, types and the OpenAPI document. Response schemas describe the `data` member
 * of the success body (the generator wraps it in the envelope). Unknown request fields are 107 (shared/platform/middleware/validate-input.ts removes `tenant_id` first, so it has no effect).
 */

export const maxAttachments = 50;
export const maxRecipients = 50;
export const maxHeaders = maxCustomHeaders;
export const maxQueryLimit = 1000;
/** The longest text the `subject` filter of a query takes. */
export const subjectSearchMaxLength = 200;
export const maxDeleteBatch = 1000;
export const maxBatchMessages = 500;

const headerValue = (what: string, max: number) =>
  z.string({ error: `${what} must be a string` }).check(
    z.maxLength(max, `${what} is at most ${max} characters`),
    z.refine((value) => !hasLineBreak(value), `Line breaks (CR/LF) are not allowed in ${what}`),
  );

const addressInput = z.union(
  [
    z.string(),
    z.strictObject({
      email: z.string({ error: 'email must be a string' }),
      name: z.optional(z.string({ error: 'name must be a string' })),
    }),
  ],
  { error: 'An address is "a@b.example", "Name <a@b.example>" or {"email": …, "name": …}' },
);

/** One address, parsed by an RFC 5322 parser; an invalid one is reported with code 10000001. */
const addressSchema = (description: string) =>
  describe(
    z.pipe(
      addressInput,
      z.transform((value, context): Address => {
        const result = parseAddress(value);
        if (result.ok) return result.address;
        context.issues.push({
          code: 'custom',
          message: result.message,
          input: value,
          ...(result.kind === 'email' ? { params: { catalogueCode: Code.InvalidEmail } } : {}),
        });
        return z.NEVER;
      }),
    ),
    description,
    'Ada Lovelace <ada@example.test>',
  );

export const address = addressSchema(
  'An e-mail address: "a@b.example", "Name <a@b.example>" or {"email", "name"}. IDN domains are accepted.',
);

/**
 * A list of addresses, or one address on its own (a list of one), as other send APIs accept. The
 * choice is made on the input's shape, so an invalid single address is reported as an address.
 */
const addressList = (what: string) =>
  describe(
    z.pipe(
      z.xor(
        [
          z
            .array(address, { error: `${what} must be a list of addresses` })
            .check(z.maxLength(maxRecipients, `${what} holds at most ${maxRecipients} addresses`)),
          address,
        ],
        { error: `${what} must be an address or a list of addresses` },
      ),
      z.transform((value): Address[] => (Array.isArray(value) ? value : [value])),
    ),
    `${what}: a list of addresses, or one address (a list of one)`,
  );

export const content = describe(
  z.discriminatedUnion(
    'kind',
    [
      z.strictObject({ kind: z.literal('text_only'), text: z.string({ error: 'text must be a string' }) }),
      z.strictObject({ kind: z.literal('html_only'), html: z.string({ error: 'html must be a string' }) }),
      z.strictObject({
        kind: z.literal('mixed'),
        text: z.string({ error: 'text must be a string' }),
        html: z.string({ error: 'html must be a string' }),
      }),
      z.strictObject({ kind: z.literal('eml'), eml: base64('eml') }),
    ],
    { error: 'content.kind must be one of text_only, html_only, mixed, eml' },
  ),
  'The body: text_only {text}, html_only {html}, mixed {text, html}, or eml {eml: base64 RFC 5322 message}',
);

export const attachment = z.strictObject({
  filename: headerValue('filename', 255).check(z.minLength(1, 'filename must not be empty')),
  content_type: z
    .string({ error: 'content_type must be a string' })
    .check(
      z.maxLength(255, 'content_type is at most 255 characters'),
      z.regex(
        /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i,
        'content_type must be a MIME type such as application/pdf',
      ),
    ),
  content: base64('content'),
});

const headerName = /^[!-9;-~]{1,76}$/;

export const headers = describe(
  z.record(z.string(), headerValue('a header value', 998)).check(
    z.superRefine((value, context) => {
      const names = Object.keys(value);
      if (names.length > maxHeaders) {
        context.addIssue({ code: 'custom', message: `At most ${maxHeaders} headers`, input: value });
      }
      if (customHeaderBytes(value) > maxCustomHeaderBytes) {
        context.addIssue({
          code: 'custom',
          message: `Custom headers are at most ${maxCustomHeaderBytes / 1024} KB together`,
          input: value,
        });
      }
      for (const name of names) {
        if (!headerName.test(name)) {
          context.addIssue({ code: 'custom', message: 'Not a valid header name', path: [name], input: name });
        } else {
          const refused = refusedHeaderReason(name);
          if (refused !== undefined)
            context.addIssue({ code: 'custom', message: refused, path: [name], input: name });
        }
      }
    }),
  ),
  'Extra header fields, name → value (no CR/LF; From, To, Subject, Date, Message-ID and MIME headers are set by the service; trace and authentication headers — Received, Return-Path, Resent-*, Authentication-Results, ARC-*, DKIM-Signature, X-SES-* — are refused)',
  { 'X-Campaign': 'welcome' },
);

export const scheduling = describe(
  z.discriminatedUnion(
    'mode',
    [
      z.strictObject({ mode: z.literal('immediate') }),
      z.strictObject({
        mode: z.literal('scheduled'),
        send_at: incomingDate('send_at', 'When to send: ISO 8601 with an offset (Z or ±hh:mm)'),
      }),
      z.strictObject({ mode: z.literal('manual-wait') }),
      z.strictObject({ mode: z.literal('manual-send'), message_uuid: uuid('message_uuid') }),
      z.strictObject({ mode: z.literal('manual-cancel'), message_uuid: uuid('message_uuid') }),
    ],
    { error: `scheduling.mode must be one of ${schedulingModes.join(', ')}` },
  ),
  'When to send. immediate (default) → queued; scheduled {send_at} → scheduled; manual-wait → waiting; manual-send {message_uuid} releases a waiting/scheduled message; manual-cancel {message_uuid} cancels a waiting/scheduled/queued one',
);

const isPlainObject = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const tagText = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .check(
      z.minLength(1, `${what} must not be empty`),
      z.maxLength(tagLimits.length, `${what} is at most ${tagLimits.length} characters`),
      z.regex(tagLimits.pattern, `${what} may hold only ${tagLimits.characters}`),
    );

export const tag = describe(
  z.strictObject(
    { name: tagText('A tag name'), value: tagText('A tag value') },
    { error: 'A tag is {"name", "value"}' },
  ),
  `A label: name and value, each 1–${tagLimits.length} characters of ${tagLimits.characters} (passed to SES as a message tag)`,
  { name: 'category', value: 'password-reset' },
);

export const tags = describe(
  z.array(tag, { error: 'tags must be a list of {"name", "value"}' }).check(
    z.maxLength(tagLimits.count, `At most ${tagLimits.count} tags`),
    z.superRefine(
      (value, context) => {
        for (const problem of tagListProblems(value)) {
          context.addIssue({
            code: 'custom',
            message: problem.message,
            path: [problem.index, 'name'],
            input: value[problem.index],
          });
        }
      },
      // Also when a tag itself is invalid: every problem is reported at once.
      { when: (payload) => Array.isArray(payload.value) },
    ),
  ),
  `Up to ${tagLimits.count} tags with distinct names; filter a query by one of them`,
);

export const metadata = describe(
  z
    .record(
      z.string(),
      z
        .string({ error: 'A metadata value must be a string' })
        .check(
          z.maxLength(
            metadataLimits.valueLength,
            `A metadata value is at most ${metadataLimits.valueLength} characters`,
          ),
        ),
      { error: 'metadata must be an object of string values' },
    )
    .check(
      z.superRefine(
        (value, context) => {
          const names = Object.keys(value);
          if (names.length > metadataLimits.count) {
            context.addIssue({
              code: 'custom',
              message: `At most ${metadataLimits.count} metadata keys`,
              input: value,
            });
          }
          for (const name of names) {
            if (name.length === 0 || name.length > metadataLimits.keyLength) {
              context.addIssue({
                code: 'custom',
                message: `A metadata key is 1–${metadataLimits.keyLength} characters`,
                path: [name.slice(0, 100)],
                input: name,
              });
            } else if (!metadataLimits.keyPattern.test(name)) {
              context.addIssue({
                code: 'custom',
                message: `A metadata key may hold only ${metadataLimits.keyCharacters}`,
                path: [name.slice(0, 100)],
                input: name,
              });
            }
          }
        },
        // Also when a value is invalid: every problem is reported at once.
        { when: (payload) => isPlainObject(payload.value) },
      ),
    ),
  `Up to ${metadataLimits.count} string values by key (key 1–${metadataLimits.keyLength} characters of ${metadataLimits.keyCharacters}, value at most ${metadataLimits.valueLength} characters); stored with the message and carried in its webhook events`,
  { order_id: '4711', customer: 'c-1029' },
);

/** `tracking` on add and batch items: strict, booleans only (docs/tracking.md). */
export const tracking = describe(
  z.strictObject(
    {
      opens: z.optional(z.boolean({ error: 'tracking.opens must be true or false' })),
      clicks: z.optional(z.boolean({ error: 'tracking.clicks must be true or false' })),
    },
    { error: 'tracking must be an object {"opens": true|false, "clicks": true|false}' },
  ),
  "Open and click tracking of this message, field by field over the sending domain's default (off unless the domain turns it on; authentication mail, tagged category: authentication, takes no domain default). Not for eml content (docs/tracking.md)",
);

const messageFields = {
  message_sender: addressSchema('Sender address; its domain is the tenant and must belong to your account'),
  from: z.optional(addressList('from')),
  to: z.optional(addressList('to')),
  cc: z.optional(addressList('cc')),
  bcc: z.optional(addressList('bcc')),
  reply_to: z.optional(addressList('reply_to')),
  subject: z.optional(describe(headerValue('subject', maxSubjectLength), 'Subject line (no CR/LF)')),
  content: z.optional(content),
  attachments: z.optional(
    z
      .array(attachment, { error: 'attachments must be a list' })
      .check(z.maxLength(maxAttachments, `At most ${maxAttachments} attachments per message`)),
  ),
  headers: z.optional(headers),
  tags: z.optional(tags),
  metadata: z.optional(metadata),
  scheduling: z.optional(scheduling),
  template: z.optional(messageTemplate),
  stream: z.optional(
    describe(
      z.enum(messageStreams, { error: `stream must be one of ${messageStreams.join(', ')}` }),
      'transactional (default): receipts, resets, alerts; broadcast: newsletters and other subscription mail, sent to exactly one `to` recipient with a one-click unsubscribe link and List-Unsubscribe headers (docs/streams.md)',
      'broadcast',
    ),
  ),
  list_id: z.optional(
    describe(
      headerValue('list_id', 300).check(
        z.superRefine((value, context) => {
          const problem = listIdProblem(value);
          if (problem !== undefined) context.addIssue({ code: 'custom', message: problem, input: value });
        }),
      ),
      'Broadcast only: the List-Id header (RFC 2919), an optional name then <label.namespace>',
      'Weekly news <weekly.news.example.com>',
    ),
  ),
  tracking: z.optional(tracking),
};

const contentFields = [
  'from',
  'to',
  'cc',
  'bcc',
  'reply_to',
  'subject',
  'content',
  'attachments',
  'headers',
  'tags',
  'metadata',
  'template',
  'stream',
  'list_id',
  'tracking',
] as const;

export const messageAddRequest = describe(
  z.strictObject({ ...messageFields, message_sender: z.optional(messageFields.message_sender) }).check(
    z.superRefine((value, context) => {
      const mode = value.scheduling?.mode ?? 'immediate';
      if (mode === 'manual-send' || mode === 'manual-cancel') {
        for (const field of contentFields) {
          if (value[field] !== undefined) {
            context.addIssue({
              code: 'custom',
              message: `Not used with ${mode}`,
              path: [field],
              input: value[field],
            });
          }
        }
        return;
      }
      if (value.message_sender === undefined) {
        context.addIssue({
          code: 'custom',
          message: 'message_sender is required',
          path: ['message_sender'],
          input: undefined,
        });
      }
      if (value.template !== undefined) {
        // A template gives the subject and the content: they are rendered when the message is accepted.
        for (const field of ['subject', 'content'] as const) {
          if (value[field] !== undefined) {
            context.addIssue({
              code: 'custom',
              message: 'Not used with template',
              path: [field],
              input: value[field],
            });
          }
        }
      } else if (value.content === undefined) {
        context.addIssue({
          code: 'custom',
          message:
            'content (or template) is required: {"kind":"text_only","text":…}, {"kind":"html_only","html":…}, {"kind":"mixed","text":…,"html":…} or {"kind":"eml","eml":<base64>}',
          path: ['content'],
          input: undefined,
        });
      }
      if (
        value.content?.kind === 'eml' &&
        value.tracking !== undefined &&
        (value.tracking.opens || value.tracking.clicks)
      ) {
        context.addIssue({
          code: 'custom',
          message:
            'An eml message is sent as given (its own MIME structure, perhaps its own signatures): its HTML is never rewritten for tracking; send content as html_only or mixed to track it',
          path: ['tracking'],
          input: value.tracking,
        });
      }
      if (value.content?.kind === 'eml' && (value.attachments?.length ?? 0) > 0) {
        context.addIssue({
          code: 'custom',
          message: 'An eml message carries its own attachments',
          path: ['attachments'],
          input: value.attachments,
        });
      }
      const recipients = (value.to?.length ?? 0) + (value.cc?.length ?? 0) + (value.bcc?.length ?? 0);
      if (recipients > maxRecipients) {
        context.addIssue({
          code: 'custom',
          message: `At most ${maxRecipients} recipients in to, cc and bcc together`,
          path: ['to'],
          input: value.to,
        });
      }
      const emlGivesRecipients = value.content?.kind === 'eml';
      if (value.stream === 'broadcast') {
        for (const field of ['cc', 'bcc'] as const) {
          if ((value[field]?.length ?? 0) > 0) {
            context.addIssue({
              code: 'custom',
              message: 'A broadcast message has exactly one recipient, in to (send a batch for many)',
              path: [field],
              input: value[field],
            });
          }
        }
        if ((value.to?.length ?? 0) > 1 || ((value.to?.length ?? 0) === 0 && !emlGivesRecipients)) {
          context.addIssue({
            code: 'custom',
            message: 'A broadcast message has exactly one recipient, in to (send a batch for many)',
            path: ['to'],
            input: value.to,
          });
        }
      } else if (value.list_id !== undefined) {
        context.addIssue({
          code: 'custom',
          message: 'list_id is for broadcast messages (stream "broadcast")',
          path: ['list_id'],
          input: value.list_id,
        });
      }
      if (
        recipients === 0 &&
        (value.content !== undefined || value.template !== undefined) &&
        !emlGivesRecipients
      ) {
        context.addIssue({
          code: 'custom',
          message: 'At least one recipient in to, cc or bcc',
          path: ['to'],
          input: value.to,
        });
      }
    }),
  ),
  'A new message, or (scheduling.mode manual-send / manual-cancel) an action on a held one',
);
registerUnknownFieldHint(messageAddRequest, foreignFieldHint);
// What the refinement above enforces, as far as JSON Schema can say it: a new message has content
// or a template (not both); manual-send and manual-cancel carry neither.
documented(messageAddRequest, {
  anyOf: [
    { required: ['content'] },
    { required: ['template'] },
    {
      required: ['scheduling'],
      properties: { scheduling: { properties: { mode: { enum: ['manual-send', 'manual-cancel'] } } } },
    },
  ],
  not: requiredTogether('content', 'template'),
});

export type MessageAddRequest = z.infer<typeof messageAddRequest>;

const status = describe(
  z.enum(messageStatuses, { error: `status must be one of ${messageStatuses.join(', ')}` }),
  'Message status',
  'queued',
);

export const messageAddResponse = z.object({
  message_uuid: describe(
    z.nullable(z.string()),
    'The new message (or the target of manual-send/cancel); null in a dry run that would create one',
  ),
  status,
  dry_run: z.optional(describe(z.boolean(), 'Present and true when nothing was changed (?dry_run=true)')),
});

export const batchValidations = ['strict', 'permissive'] as const;

const batchValidation = z.optional(
  describe(
    z.enum(batchValidations, { error: 'validation must be strict or permissive' }),
    'strict (default): one invalid message rejects the whole batch and nothing is stored; permissive: the valid messages are accepted and the invalid ones reported',
  ),
);

const batchList = <T extends z.ZodMiniType>(item: T) =>
  z
    .array(item, { error: 'messages must be a list of messages' })
    .check(
      z.minLength(1, 'messages must hold at least one message'),
      z.maxLength(maxBatchMessages, `messages holds at most ${maxBatchMessages} messages`),
    );

/**
 * The batch body as the handler validates it: the list and the mode. Each message is then checked
 * on its own against `messageAddRequest` (shared/messages/batch.ts), so that a permissive
 * batch can accept the valid ones and every detail names its message (`messages[3].to[0]`).
 */
export const messageBatchEnvelope = z.strictObject({
  messages: batchList(z.unknown()),
  validation: batchValidation,
});

export type MessageBatchEnvelope = z.infer<typeof messageBatchEnvelope>;

/** The batch body as documented: each message is exactly what add accepts. */
export const messageBatchRequest = describe(
  z.strictObject({ messages: batchList(messageAddRequest), validation: batchValidation }),
  `Up to ${maxBatchMessages} new messages, each what add accepts (scheduling immediate, scheduled or manual-wait; release and cancel stay on add), within the 6 MB request limit`,
);

const errorDetail = z.object({ field: z.string(), message: z.string() });

export const messageBatchResponse = z.object({
  results: describe(
    z.array(
      z.union([
        z.object({
          index: z.number(),
          message_uuid: describe(z.nullable(z.string()), 'The new message; null in a dry run'),
          status,
        }),
        z.object({
          index: z.number(),
          error: z.object({
            code: z.number(),
            message: z.string(),
            details: z.optional(z.array(errorDetail)),
          }),
        }),
      ]),
    ),
    'One result per message, in request order: its uuid and status, or (permissive) why it was refused',
  ),
  accepted: describe(z.number(), 'How many messages were accepted'),
  rejected: describe(z.number(), 'How many messages were refused (permissive only)'),
  dry_run: z.optional(describe(z.boolean(), 'Present and true when nothing was changed (?dry_run=true)')),
});

export const messageFilters = z.strictObject({
  status: z.optional(
    z.union(
      [
        status,
        z
          .array(status)
          .check(
            z.minLength(1, 'status list must not be empty'),
            z.maxLength(messageStatuses.length, 'too many statuses'),
          ),
      ],
      {
        error: `status must be a status or a list of statuses (${messageStatuses.join(', ')})`,
      },
    ),
  ),
  date_from: z.optional(incomingDate('date_from')),
  date_to: z.optional(incomingDate('date_to')),
  limit: z.optional(pageLimit(maxQueryLimit)),
  tag: z.optional(describe(tag, 'Only messages carrying this tag (exact name and value)')),
  metadata: z.optional(
    documented(
      describe(
        metadata.check(
          z.refine(
            (value) => Object.keys(value).length === 1,
            'Filter by exactly one metadata pair: {"<key>": "<value>"}',
          ),
        ),
        'Only messages whose metadata has this one pair (exact key and value)',
        { order_id: '4711' },
      ),
      { minProperties: 1, maxProperties: 1 },
    ),
  ),
  recipient: z.optional(
    addressSchema('Only messages to this address (to, cc or bcc; compared case-insensitively)'),
  ),
  subject: z.optional(
    describe(
      z.string({ error: 'subject must be a string' }).check(
        z.refine((value) => value.trim().length > 0, 'subject must not be blank'),
        z.maxLength(subjectSearchMaxLength, `subject is at most ${subjectSearchMaxLength} characters`),
      ),
      'Only messages whose subject contains this text (case-insensitive). It is checked on the messages the other filters list, so a page may come back short, even empty, with a cursor to continue',
      'invoice',
    ),
  ),
  stream: z.optional(
    describe(
      z.enum(messageStreams, { error: `stream must be one of ${messageStreams.join(', ')}` }),
      'Only messages of this stream',
      'broadcast',
    ),
  ),
});

export const messageQueryRequest = describe(
  z
    .strictObject({
      message_uuid: z.optional(uuid('message_uuid')),
      filters: z.optional(messageFilters),
      cursor: z.optional(
        z.string({ error: 'cursor must be a string' }).check(z.maxLength(8192, 'cursor is too long')),
      ),
    })
    .check(lookupOrPage('message_uuid')),
  'Either {message_uuid} for one message in full, or {filters, cursor} for a page of messages, newest first',
);

documented(messageQueryRequest, lookupOrPageKeywords('message_uuid'));

export type MessageQueryRequest = z.infer<typeof messageQueryRequest>;

const isoDate = serverDate('ISO 8601 with the server time zone offset');

const addressOut = z.object({ email: z.string(), name: z.optional(z.string()) });

export const messageSummary = z.object({
  message_uuid: z.string(),
  status,
  message_sender: z.string(),
  subject: z.string(),
  content_kind: z.enum(['text_only', 'html_only', 'mixed', 'eml']),
  recipients_count: z.number(),
  recipients: describe(
    z.array(z.string()),
    'The first two recipients (to, then cc, then bcc), for a list to show; recipients_count says how many there are',
    ['ada@example.org', 'grace@example.org'],
  ),
  scheduling: z.object({ mode: z.string(), send_at: z.optional(isoDate) }),
  stream: describe(z.enum(messageStreams), 'transactional or broadcast', 'transactional'),
  created_at: isoDate,
  updated_at: isoDate,
});

const recipientEvent = z.object({
  status: describe(
    z.string(),
    'sent (the relay accepted it for this recipient), delivered, bounced, failed, suppressed, delayed, complained or unsubscribed (the recipient used the one-click unsubscribe of a broadcast)',
  ),
  at: isoDate,
  response: z.optional(
    describe(
      z.string(),
      "What the receiving side said: the SMTP reply line (the relay's, or through SES the recipient server's), or the relay's acceptance",
    ),
  ),
  bounce_type: z.optional(describe(z.string(), "SES's bounce type: Permanent, Transient or Undetermined")),
  bounce_subtype: z.optional(
    describe(z.string(), "SES's bounce subtype, e.g. General, NoEmail, MailboxFull"),
  ),
  diagnostic_code: z.optional(describe(z.string(), "SES's diagnostic code of a bounce or delay")),
  delay_type: z.optional(
    describe(z.string(), "SES's delay type, e.g. MailboxFull, TransientCommunicationFailure"),
  ),
  complaint_type: z.optional(describe(z.string(), 'The feedback type of a complaint, e.g. abuse')),
});

const trackingHit = z.object({
  at: isoDate,
  user_agent: z.string(),
  client_address: describe(
    z.nullable(z.string()),
    'The client network, truncated to /24 (IPv4) or /48 (IPv6)',
  ),
  machine_open: z.boolean(),
  link: z.optional(z.string()),
  link_index: z.optional(z.number()),
});

export const messageDetails = z.object({
  message_uuid: z.string(),
  status,
  message_sender: z.string(),
  tenant: z.string(),
  from: z.array(addressOut),
  reply_to: z.array(addressOut),
  recipients: z.array(
    z.object({
      email: z.string(),
      name: z.optional(z.string()),
      kind: z.enum(['to', 'cc', 'bcc']),
      status: z.string(),
      detail: z.optional(z.string()),
      updated_at: isoDate,
      events: describe(z.array(recipientEvent), 'What happened to the mail for this recipient, in order'),
      tracking: z.optional(
        describe(
          z.object({
            opens: describe(z.number(), 'How many times the open pixel was loaded'),
            first_opened_at: z.optional(isoDate),
            first_human_open_at: z.optional(isoDate),
            last_open: z.optional(trackingHit),
            clicks: describe(z.number(), 'How many times a tracked link was followed'),
            first_clicked_at: z.optional(isoDate),
            last_click: z.optional(trackingHit),
          }),
          'Opens and clicks of this recipient (docs/tracking.md); present when the message is tracked',
        ),
      ),
    }),
  ),
  subject: z.string(),
  content_kind: z.enum(['text_only', 'html_only', 'mixed', 'eml']),
  headers: z.record(z.string(), z.string()),
  tags: describe(z.array(z.object({ name: z.string(), value: z.string() })), 'The tags given at add'),
  metadata: describe(z.record(z.string(), z.string()), 'The metadata given at add'),
  attachments: z.array(z.object({ filename: z.string(), content_type: z.string(), size: z.number() })),
  scheduling: z.object({ mode: z.string(), send_at: z.optional(isoDate) }),
  template: z.optional(messageTemplateRecord),
  stream: describe(z.enum(messageStreams), 'transactional or broadcast', 'transactional'),
  list_id: z.optional(describe(z.string(), 'The List-Id given at add (broadcast)')),
  tracking: describe(
    z.object({ opens: z.optional(z.boolean()), clicks: z.optional(z.boolean()) }),
    "Tracking as asked at add; a field left out follows the sending domain's default (off unless the domain turns it on)",
  ),
  status_history: z.array(z.object({ status: z.string(), at: isoDate, detail: z.optional(z.string()) })),
  created_at: isoDate,
  updated_at: isoDate,
});

export const messageQueryResponse = z.union([
  messageDetails,
  z.object({
    messages: z.array(messageSummary),
    count: describe(z.number(), 'Number of messages in this page'),
    next_cursor: describe(
      z.nullable(z.string()),
      'Pass as `cursor` (with the same filters) for the next page; null at the end',
    ),
  }),
]);

export const messageDeleteRequest = describe(
  z.strictObject({
    message_uuids: z
      .array(uuid('message_uuids item'), { error: 'message_uuids must be a list of UUIDs' })
      .check(
        z.minLength(1, 'message_uuids must name at least one message'),
        z.maxLength(maxDeleteBatch, `message_uuids holds at most ${maxDeleteBatch} ids`),
      ),
  }),
  'Messages to delete; sent, delivered, bounced and processing messages are protected and kept',
);

export type MessageDeleteRequest = z.infer<typeof messageDeleteRequest>;

export const messageDeleteResponse = z.object({
  deleted: z.array(z.string()),
  not_found: z.array(z.string()),
  unauthorized: z.array(z.string()),
  protected: z.array(z.string()),
  dry_run: z.optional(z.boolean()),
});
