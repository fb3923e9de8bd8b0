import { Code } from '../platform/errors/catalogue.ts';
import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { at, otherUuid, uuid } from '../platform/schemas/examples.ts';
import { notYourDomainMessage } from './model/domain-ownership.ts';
import {
  messageAddRequest,
  messageAddResponse,
  messageBatchRequest,
  messageBatchResponse,
  messageDeleteRequest,
  messageDeleteResponse,
  messageQueryRequest,
  messageQueryResponse,
} from './schemas.ts';

export const messageAdd = route('message-add', 'POST /message/add-1.0', ['messages:send'], { dryRun: true });
export const messageBatch = route('message-batch', 'POST /message/batch-1.0', ['messages:send'], {
  dryRun: true,
});
export const messageQuery = route('message-query', 'POST /message/query-1.0', ['messages:read']);
export const messageDelete = route('message-delete', 'POST /message/delete-1.0', ['messages:delete'], {
  dryRun: true,
});

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const messagesRoutes = [messageAdd, messageBatch, messageQuery, messageDelete] as const;

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
export const messagesRouteDetails = {
  'message-add': {
    summary: 'Accept a message for sending, or release/cancel a held one',
    tag: 'messages',
    // Stores the bodies, writes the message and queues it (or releases / cancels a held one); reads
    // the parts of the template a message is rendered from.
    access: {
      table: 'write',
      queue: 'send',
      objects: { 'messages/': ['write'], 'templates/': ['read'] },
    },
    request: messageAddRequest,
    requestIn: 'body',
    response: messageAddResponse,
    // 113: a sender or From domain that is not the caller's; 112/111: manual-send/cancel target
    // unknown or in the wrong status, or an Idempotency-Key reused with another body;
    // 10000001: an invalid address (also inside an eml); 5: a conflicting write (transactions).
    errors: [Code.CommitFailed, Code.MethodValidation, Code.NotFound, Code.AccessDenied, Code.InvalidEmail],
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          'Makes a retry safe: the same key with the same body within 24 hours answers the first result and creates nothing; with another body it is code 111. 1–255 printable ASCII characters (else 107). A dry run does not consume the key.',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' },
        example: 'order-4711-welcome',
      },
    ],
    examples: {
      request: {
        immediate: {
          summary: 'Send now, text and HTML',
          value: {
            message_sender: 'Shop <noreply@example.test>',
            to: ['Ada Lovelace <ada@example.org>', { email: 'grace@example.org', name: 'Grace Hopper' }],
            subject: 'Your order has shipped',
            content: {
              kind: 'mixed',
              text: 'Your order 4711 is on its way.',
              html: '<p>Your order <b>4711</b> is on its way.</p>',
            },
            headers: { 'X-Campaign': 'shipping' },
            tags: [{ name: 'category', value: 'shipping' }],
            metadata: { order_id: '4711', customer: 'c-1029' },
          },
        },
        scheduled: {
          summary: 'Send later, with an attachment',
          value: {
            message_sender: 'billing@example.test',
            to: ['ada@example.org'],
            subject: 'Invoice 2026-117',
            content: { kind: 'text_only', text: 'Your invoice is attached.' },
            attachments: [
              { filename: 'invoice.pdf', content_type: 'application/pdf', content: 'JVBERi0xLjQK' },
            ],
            scheduling: { mode: 'scheduled', send_at: '2026-11-23T08:00:00+01:00' },
          },
        },
        template: {
          summary: 'Send with the published version of a template',
          value: {
            message_sender: 'Shop <noreply@example.test>',
            to: ['Ada Lovelace <ada@example.org>'],
            template: { alias: 'welcome', model: { user: { first_name: 'Ada' }, items: [] } },
          },
        },
        release: {
          summary: 'Release a held (manual-wait) message',
          value: { scheduling: { mode: 'manual-send', message_uuid: uuid } },
        },
      },
      response: {
        queued: { summary: 'Accepted', value: { message_uuid: uuid, status: 'queued' } },
        dryRun: {
          summary: 'Dry run: checked, nothing created',
          value: { message_uuid: null, status: 'queued', dry_run: true },
        },
      },
    },
  },
  'message-batch': {
    summary: 'Accept up to 500 messages in one request',
    tag: 'messages',
    // The same for up to 500 messages at once, with BatchWriteItem and SendMessageBatch; reads the
    // parts of the templates its messages are rendered from; charges the account's message budget
    // (one UpdateItem of `RATE#<account>` per batch, docs/decisions/0005-account-message-budget.md).
    access: {
      table: 'write-batch',
      queue: 'send',
      objects: { 'messages/': ['write'], 'templates/': ['read'] },
    },
    request: messageBatchRequest,
    requestIn: 'body',
    response: messageBatchResponse,
    // A strict batch answers the code its first bad message would get on add (107, 10000001, 113,
    // 112 for a template that is not yours, 111 for one with nothing published), with a detail per
    // problem naming the message; 111 also: an Idempotency-Key reused with another body, or a batch
    // with this key still being stored.
    errors: [Code.MethodValidation, Code.NotFound, Code.AccessDenied, Code.InvalidEmail],
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          'Covers the whole batch: the same key with the same body within 24 hours answers the same results (the same uuids) and stores nothing again; with another body it is code 111. 1–255 printable ASCII characters (else 107).',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' },
        example: 'nightly-receipts-2026-11-22',
      },
    ],
    examples: {
      request: {
        permissive: {
          summary: 'Two receipts, tagged; the valid ones are accepted',
          value: {
            validation: 'permissive',
            messages: [
              {
                message_sender: 'Shop <noreply@example.test>',
                to: ['ada@example.org'],
                subject: 'Your receipt 4711',
                content: { kind: 'text_only', text: 'Thank you for your order 4711.' },
                tags: [{ name: 'category', value: 'receipt' }],
                metadata: { order_id: '4711' },
              },
              {
                message_sender: 'Shop <noreply@shop.example>',
                to: ['grace@example.org'],
                subject: 'Your receipt 4712',
                content: { kind: 'text_only', text: 'Thank you for your order 4712.' },
                tags: [{ name: 'category', value: 'receipt' }],
                metadata: { order_id: '4712' },
              },
            ],
          },
        },
      },
      response: {
        mixed: {
          summary: 'One accepted, one refused (permissive): its sender domain is not yours',
          value: {
            results: [
              { index: 0, message_uuid: uuid, status: 'queued' },
              {
                index: 1,
                error: {
                  code: 113,
                  message: notYourDomainMessage('shop.example', 'acme'),
                  details: [
                    { field: 'message_sender', message: notYourDomainMessage('shop.example', 'acme') },
                  ],
                },
              },
            ],
            accepted: 1,
            rejected: 1,
          },
        },
      },
    },
  },
  'message-query': {
    summary: 'One message in full, or a filtered page of messages',
    tag: 'messages',
    // Reads only.
    access: { table: 'read' },
    request: messageQueryRequest,
    requestIn: 'body',
    response: messageQueryResponse,
    // 112: unknown message_uuid (or another account's); 107 also for a bad cursor; 10000001: an
    // invalid `recipient` filter.
    errors: [Code.NotFound, Code.InvalidEmail],
    examples: {
      request: {
        filters: {
          summary: 'A page of queued or failed messages',
          value: {
            filters: {
              status: ['queued', 'failed'],
              date_from: '2026-11-01T00:00:00+01:00',
              date_to: '2026-11-30T23:59:59+01:00',
              limit: 50,
            },
          },
        },
        tagged: {
          summary: 'Bounced messages with a tag, in a date range',
          value: {
            filters: {
              tag: { name: 'category', value: 'password-reset' },
              status: 'bounced',
              date_from: '2026-11-01T00:00:00+01:00',
              limit: 50,
            },
          },
        },
        recipient: {
          summary: 'Did the reset mail reach joe@? (any case)',
          value: { filters: { recipient: 'Joe@Example.org', metadata: { flow: 'password-reset' } } },
        },
        one: { summary: 'One message in full', value: { message_uuid: uuid } },
      },
      response: {
        page: {
          summary: 'A page of messages',
          value: {
            messages: [
              {
                message_uuid: uuid,
                status: 'queued',
                message_sender: 'noreply@example.test',
                subject: 'Your order has shipped',
                content_kind: 'mixed',
                recipients_count: 2,
                recipients: ['ada@example.org', 'grace@example.org'],
                scheduling: { mode: 'immediate' },
                stream: 'transactional',
                created_at: at,
                updated_at: at,
              },
            ],
            count: 1,
            next_cursor: null,
          },
        },
        bounced: {
          summary: 'A recipient that bounced, with the SMTP reply',
          value: {
            message_uuid: uuid,
            status: 'bounced',
            message_sender: 'noreply@example.test',
            tenant: 'example.test',
            from: [{ email: 'noreply@example.test' }],
            reply_to: [],
            recipients: [
              {
                email: 'ada@example.org',
                kind: 'to',
                status: 'bounced',
                detail: '550 5.1.1 <ada@example.org>: Recipient address rejected: User unknown',
                updated_at: at,
                events: [
                  {
                    status: 'bounced',
                    at,
                    response: '550 5.1.1 <ada@example.org>: Recipient address rejected: User unknown',
                  },
                ],
              },
            ],
            subject: 'Your order has shipped',
            content_kind: 'text_only',
            headers: {},
            tags: [{ name: 'category', value: 'shipping' }],
            metadata: { order_id: '4711' },
            attachments: [],
            scheduling: { mode: 'immediate' },
            stream: 'transactional',
            tracking: {},
            status_history: [
              { status: 'queued', at, detail: 'immediate' },
              { status: 'processing', at, detail: 'send attempt 1' },
              {
                status: 'bounced',
                at,
                detail:
                  'ada@example.org: 550 5.1.1 <ada@example.org>: Recipient address rejected: User unknown',
              },
              { status: 'bounced', at },
            ],
            created_at: at,
            updated_at: at,
          },
        },
        details: {
          summary: 'One message in full',
          value: {
            message_uuid: uuid,
            status: 'queued',
            message_sender: 'noreply@example.test',
            tenant: 'example.test',
            from: [{ email: 'noreply@example.test', name: 'Shop' }],
            reply_to: [],
            recipients: [
              {
                email: 'ada@example.org',
                name: 'Ada Lovelace',
                kind: 'to',
                status: 'queued',
                updated_at: at,
                events: [],
              },
            ],
            subject: 'Your order has shipped',
            content_kind: 'mixed',
            headers: { 'X-Campaign': 'shipping' },
            tags: [{ name: 'category', value: 'shipping' }],
            metadata: { order_id: '4711' },
            attachments: [],
            scheduling: { mode: 'immediate' },
            stream: 'transactional',
            tracking: { opens: true, clicks: true },
            status_history: [{ status: 'queued', at }],
            created_at: at,
            updated_at: at,
          },
        },
      },
    },
  },
  'message-delete': {
    summary: 'Delete messages that have not been sent',
    tag: 'messages',
    // The only function that deletes messages and their objects.
    access: { table: 'delete', objects: { 'messages/': ['delete'] } },
    request: messageDeleteRequest,
    requestIn: 'body',
    response: messageDeleteResponse,
    examples: {
      request: { two: { summary: 'Delete two messages', value: { message_uuids: [uuid, otherUuid] } } },
      response: {
        outcome: {
          summary: 'One deleted, one already sent',
          value: { deleted: [uuid], not_found: [], unauthorized: [], protected: [otherUuid] },
        },
      },
    },
  },
} as const satisfies RouteDetailsOf<(typeof messagesRoutes)[number]>;
