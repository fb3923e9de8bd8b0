import type { $ZodType } from 'zod/v4/core';
import {
  avatarGetRequest,
  avatarGetResponse,
  keepaliveRunRequest,
  keepaliveRunResponse,
} from './avatars/schemas.ts';
import {
  dkimSetAlgorithmRequest,
  dkimSetAlgorithmResponse,
  dkimStatusRequest,
  dkimStatusResponse,
} from './domains/dkim/schemas.ts';
import {
  inboundDeleteRequest,
  inboundDeleteResponse,
  inboundQueryRequest,
  inboundQueryResponse,
} from './inbound/schemas.ts';
import {
  messageAddRequest,
  messageAddResponse,
  messageBatchRequest,
  messageBatchResponse,
  messageContentRequest,
  messageContentResponse,
  messageDeleteRequest,
  messageDeleteResponse,
  messageQueryRequest,
  messageQueryResponse,
} from './messages/schemas.ts';
import { Code, type ErrorCode } from './platform/errors/catalogue.ts';
import type { RouteId } from './routes.ts';
import { healthResponse, keepaliveStatusResponse } from './service/schemas.ts';
import { statsQueryRequest, statsQueryResponse } from './stats/schemas.ts';
import {
  suppressionAddRequest,
  suppressionAddResponse,
  suppressionDeleteRequest,
  suppressionDeleteResponse,
  suppressionQueryRequest,
  suppressionQueryResponse,
} from './suppressions/schemas.ts';
import {
  templateAddRequest,
  templateAddResponse,
  templateDeleteRequest,
  templateDeleteResponse,
  templatePublishRequest,
  templatePublishResponse,
  templateQueryRequest,
  templateQueryResponse,
  templateRenderRequest,
  templateRenderResponse,
  templateUpdateRequest,
  templateUpdateResponse,
} from './templates/schemas.ts';
import {
  webhookAddRequest,
  webhookAddResponse,
  webhookDeleteResponse,
  webhookIdRequest,
  webhookQueryRequest,
  webhookQueryResponse,
  webhookReplayRequest,
  webhookReplayResponse,
  webhookRotateSecretResponse,
} from './webhooks/schemas.ts';

/**
 * The contract registry: route id → the zod schemas of its request and of its success response
 * (`<camelRouteId>Response` is the `data` member of the envelope; the generator wraps it). The
 * OpenAPI generator (infra/openapi/build.ts, `npm run openapi`) reads it; no Lambda imports it, so
 * it may import every area's schemas.
 *
 * To document a route: export `<camelRouteId>Request` / `<camelRouteId>Response` from
 * shared/schemas/<area>.ts and add one entry below, in the block of its area. `errors` lists the
 * route's own codes beyond those the chain derives (gateway, auth, scopes, dry run, JSON,
 * validation); `examples` are checked against the schemas by test/integration/openapi.test.ts.
 */
export interface Example {
  summary: string;
  /** A body (requestIn 'body'), the query parameters (requestIn 'query') or the `data` member. */
  value: unknown;
}

export interface HeaderParameter {
  name: string;
  description: string;
  required: boolean;
  schema: Record<string, unknown>;
  example: string;
}

export type RouteContract = {
  response?: $ZodType;
  errors?: readonly ErrorCode[];
  /** Request headers the route reads besides Authorization. */
  headers?: readonly HeaderParameter[];
  examples?: { request?: Record<string, Example>; response?: Record<string, Example> };
  /** The success body is not the `{"data": …}` envelope (the OpenAPI document itself). */
  raw?: { description: string };
} & ({ request?: undefined; requestIn?: undefined } | { request: $ZodType; requestIn: 'body' | 'query' });

const uuid = '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e';
const otherUuid = '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0f';
const at = '2026-11-22T09:15:00.000+01:00';
const webhookExampleId = 'wh_5f0c6a1e2b3d4c5e6f708192';
const eventExampleId = 'evt_0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const inboundExampleId = '5d0f3c2a-9b1e-8c4d-a2f0-6e7d8c9b0a1f';
/** A received message's summary, as the inbound routes and the `inbound.received` event show it. */
export const inboundExampleSummary = {
  inbound_uuid: inboundExampleId,
  received_at: at,
  recipient: 'support+ticket-42@example.test',
  from: { email: 'ada@example.org', name: 'Ada Lovelace' },
  to: [{ email: 'support+ticket-42@example.test', name: null }],
  cc: [],
  subject: 'Re: Your order 42',
  message_id: '<CAF8s=abc@mail.example.org>',
  in_reply_to: `<${uuid}@example.test>`,
  reply_to_message_uuid: uuid,
  mailbox_hash: 'ticket-42',
  auth: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
  spam: { verdict: 'pass' },
  size: 48213,
  parse_error: null,
};

export const contract: Record<RouteId, RouteContract> = {
  // service (foundation)
  health: {
    response: healthResponse,
    examples: { response: { ok: { summary: 'Healthy', value: { status: 'ok', caller_ip: '203.0.113.7' } } } },
  },
  'keepalive-status': {
    response: keepaliveStatusResponse,
    examples: { response: { alive: { summary: 'Alive', value: { status: 'alive', at } } } },
  },
  openapi: { raw: { description: 'This API as an OpenAPI 3.0.3 document' } },

  // messages
  'message-add': {
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
                  message: 'shop.example is not one of your sending domains',
                  details: [
                    { field: 'message_sender', message: 'shop.example is not one of your sending domains' },
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
                scheduling: { mode: 'immediate' },
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
            status_history: [{ status: 'queued', at }],
            created_at: at,
            updated_at: at,
          },
        },
      },
    },
  },
  'message-content': {
    request: messageContentRequest,
    requestIn: 'body',
    response: messageContentResponse,
    // 112: unknown message_uuid (or another account's); 111: its stored content is missing.
    errors: [Code.NotFound, Code.MethodValidation],
    examples: {
      request: { one: { summary: 'One message', value: { message_uuid: uuid } } },
      response: {
        sent: {
          summary: 'A sent message with one attachment',
          value: {
            subject: 'Invoice 2026-117',
            text: 'Your invoice is attached.\r\n',
            html: null,
            headers: [
              { name: 'DKIM-Signature', value: 'v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.test; …' },
              { name: 'From', value: 'billing@example.test' },
              { name: 'To', value: 'ada@example.org' },
              { name: 'Subject', value: 'Invoice 2026-117' },
              { name: 'Message-ID', value: `<${uuid}@example.test>` },
              { name: 'Date', value: 'Sun, 22 Nov 2026 08:15:00 +0000' },
              { name: 'MIME-Version', value: '1.0' },
            ],
            attachments: [
              {
                filename: 'invoice.pdf',
                content_type: 'application/pdf',
                size: 48213,
                url: `https://bucket.s3.amazonaws.com/messages/${uuid}/download/attachment-1?X-Amz-Signature=…`,
              },
            ],
            raw_url: `https://bucket.s3.amazonaws.com/messages/${uuid}/download/message.eml?X-Amz-Signature=…`,
            expires_at: '2026-11-22T09:30:00.000+01:00',
          },
        },
      },
    },
  },
  'message-delete': {
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

  // statistics
  'stats-query': {
    request: statsQueryRequest,
    requestIn: 'body',
    response: statsQueryResponse,
    examples: {
      request: {
        daily: {
          summary: 'Three days, by sending domain',
          value: {
            date_from: '2026-11-20T00:00:00+01:00',
            date_to: '2026-11-22T23:59:59+01:00',
            granularity: 'day',
            group_by: 'domain',
          },
        },
      },
      response: {
        daily: {
          summary: 'One domain, three days',
          value: {
            series: [
              {
                key: 'example.test',
                points: [
                  {
                    at: '2026-11-20T00:00:00.000+01:00',
                    accepted: 120,
                    sent: 130,
                    delivered: 127,
                    bounced: 2,
                    complained: 0,
                    suppressed: 1,
                    failed: 0,
                  },
                  {
                    at: '2026-11-21T00:00:00.000+01:00',
                    accepted: 98,
                    sent: 101,
                    delivered: 100,
                    bounced: 1,
                    complained: 1,
                    suppressed: 0,
                    failed: 0,
                  },
                  {
                    at: '2026-11-22T00:00:00.000+01:00',
                    accepted: 0,
                    sent: 0,
                    delivered: 0,
                    bounced: 0,
                    complained: 0,
                    suppressed: 0,
                    failed: 0,
                  },
                ],
              },
            ],
            totals: {
              accepted: 218,
              sent: 231,
              delivered: 227,
              bounced: 3,
              complained: 1,
              suppressed: 1,
              failed: 0,
              bounce_rate: 0.012987012987012988,
              complaint_rate: 0.004405286343612335,
            },
          },
        },
      },
    },
  },

  // domains
  'dkim-status': {
    request: dkimStatusRequest,
    requestIn: 'query',
    response: dkimStatusResponse,
    // 112: the domain is not on the platform for this account (spec 7.3, rule 1).
    errors: [Code.NotFound],
    examples: {
      request: { domain: { summary: 'A registered domain', value: { domain: 'example.test' } } },
      response: {
        active: {
          summary: 'An active, published RSA key',
          value: {
            svc_config: {
              dkim_enabled: true,
              dkim_algorithm: 'rsa-sha256',
              dkim_selector: 'rsa-20261122-3f9a1c',
              dkim_dns_status: 'verified',
            },
            dkim_keys: [
              {
                selector: 'rsa-20261122-3f9a1c',
                algorithm: 'rsa-sha256',
                dns_name: 'rsa-20261122-3f9a1c._domainkey.example.test',
                dns_type: 'TXT',
                dns_value: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA',
                dns_value_chunks: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA'],
                status: 'active',
                created_at: at,
              },
            ],
          },
        },
      },
    },
  },
  'dkim-set-algorithm': {
    request: dkimSetAlgorithmRequest,
    requestIn: 'body',
    response: dkimSetAlgorithmResponse,
    // 112: unknown domain; 5: the key switch is one transaction. (115, which every route can answer,
    // also when the domain got 10 new keys in 24 hours: docs/dkim.md, "Bounds".)
    errors: [Code.CommitFailed, Code.NotFound],
    examples: {
      request: {
        ed25519: {
          summary: 'Rotate to an Ed25519 key',
          value: { domain: 'example.test', algorithm: 'ed25519-sha256' },
        },
      },
      response: {
        rotated: {
          summary: 'Rotated',
          value: {
            svc_config: { dkim_algorithm: 'ed25519-sha256', dkim_enabled: true },
            dkim_keys: [
              {
                selector: 'ed25519-20261122-7b2e4d',
                algorithm: 'ed25519-sha256',
                dns_name: 'ed25519-20261122-7b2e4d._domainkey.example.test',
                dns_type: 'TXT',
                dns_value: 'v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=',
                dns_value_chunks: ['v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo='],
                status: 'active',
                created_at: at,
              },
              {
                selector: 'rsa-20261122-3f9a1c',
                algorithm: 'rsa-sha256',
                dns_name: 'rsa-20261122-3f9a1c._domainkey.example.test',
                dns_type: 'TXT',
                dns_value: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA',
                dns_value_chunks: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA'],
                status: 'retired',
                created_at: at,
                retired_at: at,
              },
            ],
          },
        },
      },
    },
  },

  // avatars
  'avatar-get': {
    request: avatarGetRequest,
    requestIn: 'query',
    response: avatarGetResponse,
    errors: [Code.InvalidEmail, Code.InvalidAvatarRequest],
    examples: {
      request: {
        sized: { summary: 'A 128-pixel avatar', value: { email: 'jane.doe@example.com', size: '128' } },
      },
      response: {
        cached: {
          summary: 'From the cache',
          value: {
            email: 'jane.doe@example.com',
            content_type: 'image/png',
            url: 'https://svc-mail-avatars.s3.eu-west-1.amazonaws.com/avatars/3f9a1c.png?X-Amz-Signature=…',
            source: 'cache',
            expires_at: at,
          },
        },
      },
    },
  },
  'keepalive-run': {
    request: keepaliveRunRequest,
    requestIn: 'body',
    response: keepaliveRunResponse,
    errors: [Code.HousekeepingFailed],
    examples: {
      request: { empty: { summary: 'No fields (the body may also be left out)', value: {} } },
      response: {
        done: {
          summary: 'A complete run',
          value: { examined: 120, removed: 7, remaining: false, resumed: false },
        },
      },
    },
  },

  // suppressions
  'suppression-query': {
    request: suppressionQueryRequest,
    requestIn: 'body',
    response: suppressionQueryResponse,
    // 10000001: an invalid email; 107 also for a bad cursor.
    errors: [Code.InvalidEmail],
    examples: {
      request: {
        one: { summary: 'One address', value: { email: 'ada@example.org' } },
        page: {
          summary: 'Hard bounces of November',
          value: {
            filters: {
              reason: 'hard_bounce',
              date_from: '2026-11-01T00:00:00+01:00',
              date_to: '2026-11-30T23:59:59+01:00',
              limit: 50,
            },
          },
        },
      },
      response: {
        one: {
          summary: 'A suppressed address',
          value: {
            suppression: {
              email: 'ada@example.org',
              reason: 'hard_bounce',
              detail: '550 5.1.1 user unknown',
              message_uuid: uuid,
              created_at: at,
            },
          },
        },
        none: { summary: 'Not suppressed', value: { suppression: null } },
        page: {
          summary: 'A page of the list',
          value: {
            suppressions: [
              {
                email: 'grace@example.org',
                reason: 'complaint',
                detail: 'abuse',
                message_uuid: otherUuid,
                created_at: at,
              },
            ],
            count: 1,
            next_cursor: null,
          },
        },
      },
    },
  },
  'suppression-add': {
    request: suppressionAddRequest,
    requestIn: 'body',
    response: suppressionAddResponse,
    errors: [Code.InvalidEmail],
    examples: {
      request: {
        two: {
          summary: 'Suppress two addresses',
          value: { emails: ['ada@example.org', 'Grace@Example.org'] },
        },
      },
      response: {
        outcome: {
          summary: 'One added, one already listed',
          value: { added: ['ada@example.org'], existing: ['grace@example.org'] },
        },
      },
    },
  },
  'suppression-delete': {
    request: suppressionDeleteRequest,
    requestIn: 'body',
    response: suppressionDeleteResponse,
    errors: [Code.InvalidEmail],
    examples: {
      request: {
        two: {
          summary: 'Remove two addresses',
          value: { emails: ['ada@example.org', 'nobody@example.org'] },
        },
      },
      response: {
        outcome: {
          summary: 'One removed, one was not listed',
          value: { deleted: ['ada@example.org'], not_found: ['nobody@example.org'] },
        },
      },
    },
  },

  // webhooks
  'webhook-add': {
    request: webhookAddRequest,
    requestIn: 'body',
    response: webhookAddResponse,
    // 111: the account already has 10 endpoints; 107 also for a URL the target rule refuses.
    errors: [Code.MethodValidation],
    examples: {
      request: {
        all: { summary: 'Every event type', value: { url: 'https://hooks.example.com/svc-mail' } },
        some: {
          summary: 'Bounces and complaints only',
          value: {
            url: 'https://hooks.example.com/svc-mail/bounces',
            events: ['message.bounced', 'message.complained'],
            description: 'Suppression sync',
          },
        },
      },
      response: {
        added: {
          summary: 'Added (the secret is shown only now)',
          value: {
            webhook: {
              webhook_id: webhookExampleId,
              url: 'https://hooks.example.com/svc-mail',
              events: ['message.delivered', 'message.bounced'],
              description: null,
              enabled: true,
              created_at: at,
              health: { state: 'healthy', consecutive_failures: 0, failing_since: null, paused_until: null },
              note: null,
              secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwQ0Cu6nD1vGs=',
            },
          },
        },
      },
    },
  },
  'webhook-query': {
    request: webhookQueryRequest,
    requestIn: 'body',
    response: webhookQueryResponse,
    // 112: unknown or another account's webhook_id.
    errors: [Code.NotFound],
    examples: {
      request: {
        all: { summary: 'Every endpoint', value: {} },
        one: { summary: 'One endpoint with its delivery attempts', value: { webhook_id: webhookExampleId } },
      },
      response: {
        one: {
          summary: 'One endpoint with its delivery attempts',
          value: {
            webhook: {
              webhook_id: webhookExampleId,
              url: 'https://hooks.example.com/svc-mail',
              events: ['message.delivered'],
              description: null,
              enabled: true,
              created_at: at,
              // The latest attempt succeeded: the failure before it is forgotten.
              health: { state: 'healthy', consecutive_failures: 0, failing_since: null, paused_until: null },
              note: null,
              deliveries: [
                {
                  event_id: eventExampleId,
                  type: 'message.delivered',
                  attempt: 2,
                  status_code: 200,
                  error: null,
                  at,
                  next_attempt_at: null,
                },
                {
                  event_id: eventExampleId,
                  type: 'message.delivered',
                  attempt: 1,
                  status_code: 500,
                  error: 'Receiver answered 500',
                  at,
                  next_attempt_at: at,
                },
              ],
            },
          },
        },
      },
    },
  },
  'webhook-delete': {
    request: webhookIdRequest,
    requestIn: 'body',
    response: webhookDeleteResponse,
    errors: [Code.NotFound],
    examples: {
      request: { one: { summary: 'Delete an endpoint', value: { webhook_id: webhookExampleId } } },
      response: { deleted: { summary: 'Deleted', value: { webhook_id: webhookExampleId, deleted: true } } },
    },
  },
  'webhook-rotate-secret': {
    request: webhookIdRequest,
    requestIn: 'body',
    response: webhookRotateSecretResponse,
    // 112: unknown webhook; 5: rotated concurrently.
    errors: [Code.CommitFailed, Code.NotFound],
    examples: {
      request: { one: { summary: 'Rotate the secret', value: { webhook_id: webhookExampleId } } },
      response: {
        rotated: {
          summary: 'The new secret (the previous one also signs for 24 h)',
          value: {
            webhook: {
              webhook_id: webhookExampleId,
              url: 'https://hooks.example.com/svc-mail',
              events: ['message.delivered', 'message.bounced'],
              description: null,
              enabled: true,
              created_at: at,
              health: { state: 'healthy', consecutive_failures: 0, failing_since: null, paused_until: null },
              note: null,
              secret: 'whsec_3q2+7w8bY1bQ0dVHc5N6x9o4mR7sT2uV8wXyZaBcDeE=',
            },
          },
        },
      },
    },
  },
  'webhook-replay': {
    request: webhookReplayRequest,
    requestIn: 'body',
    response: webhookReplayResponse,
    // 112: unknown webhook or event (events are kept 7 days); 111: the endpoint is disabled.
    errors: [Code.MethodValidation, Code.NotFound],
    examples: {
      request: {
        one: {
          summary: 'Deliver an event again',
          value: { webhook_id: webhookExampleId, event_id: eventExampleId },
        },
      },
      response: {
        queued: {
          summary: 'Queued',
          value: { webhook_id: webhookExampleId, event_id: eventExampleId, queued: true },
        },
      },
    },
  },

  // inbound
  'inbound-query': {
    request: inboundQueryRequest,
    requestIn: 'body',
    response: inboundQueryResponse,
    // 112: unknown or another account's received message; 10000001: a filter address is invalid.
    errors: [Code.InvalidEmail, Code.NotFound],
    examples: {
      request: {
        one: { summary: 'One received message in full', value: { inbound_uuid: inboundExampleId } },
        page: {
          summary: 'Mail received for one address this week',
          value: {
            filters: {
              recipient: 'support@example.test',
              date_from: '2026-11-16T00:00:00+01:00',
              limit: 20,
            },
          },
        },
      },
      response: {
        one: {
          summary: 'A threaded reply',
          value: {
            ...inboundExampleSummary,
            text: 'Yes, please ship it.\n\nOn Sun, Nov 22, 2026 at 9:15 AM Shop <orders@example.test> wrote:\n> Your order 42 is ready.',
            html: null,
            stripped_text_reply: 'Yes, please ship it.',
            headers: [{ name: 'Subject', value: 'Re: Your order 42' }],
            attachments: [
              {
                filename: 'receipt.pdf',
                content_type: 'application/pdf',
                size: 20411,
                url: 'https://svc-mail-objects.s3.amazonaws.com/inbound/parsed/abc/attachments/0?X-Amz-Signature=…',
              },
            ],
            raw_url: 'https://svc-mail-objects.s3.amazonaws.com/inbound/raw/abc?X-Amz-Signature=…',
            expires_at: at,
          },
        },
        page: {
          summary: 'A page',
          value: {
            inbound: [
              {
                ...inboundExampleSummary,
                attachments: [{ filename: 'receipt.pdf', content_type: 'application/pdf', size: 20411 }],
              },
            ],
            count: 1,
            next_cursor: null,
          },
        },
      },
    },
  },
  'inbound-delete': {
    request: inboundDeleteRequest,
    requestIn: 'body',
    response: inboundDeleteResponse,
    // 112: unknown or another account's received message.
    errors: [Code.NotFound],
    examples: {
      request: { one: { summary: 'Delete one', value: { inbound_uuid: inboundExampleId } } },
      response: { deleted: { summary: 'Deleted', value: { inbound_uuid: inboundExampleId, deleted: true } } },
    },
  },

  // templates
  'template-add': {
    request: templateAddRequest,
    requestIn: 'body',
    response: templateAddResponse,
    // 111: the alias is taken, or the account has 1,000 templates; 112: layout_alias is not yours;
    // 5: a concurrent write of the same template.
    errors: [Code.CommitFailed, Code.MethodValidation, Code.NotFound],
    examples: {
      request: {
        welcome: {
          summary: 'A template with HTML and text, in a layout',
          value: {
            alias: 'welcome',
            name: 'Welcome mail',
            subject: 'Welcome, {{user.first_name}}',
            html: '<h1>Hello {{user.first_name}}</h1>{{#each items}}<p>{{title}}: {{price}}</p>{{/each}}',
            text: 'Hello {{user.first_name}}\n{{#each items}}- {{title}}: {{price}}\n{{/each}}',
            layout_alias: 'base-layout',
          },
        },
      },
      response: {
        added: {
          summary: 'Added: version 1, a draft',
          value: {
            template: {
              alias: 'welcome',
              name: 'Welcome mail',
              published_version: null,
              versions: [{ version: 1, status: 'draft', created_at: at }],
            },
            version: 1,
          },
        },
      },
    },
  },
  'template-update': {
    request: templateUpdateRequest,
    requestIn: 'body',
    response: templateUpdateResponse,
    // 112: no such template or layout; 5: a concurrent write that kept winning.
    errors: [Code.CommitFailed, Code.NotFound],
    examples: {
      request: {
        subject: {
          summary: 'A new draft with another subject',
          value: { alias: 'welcome', subject: 'Hi {{user.first_name}}!' },
        },
      },
      response: {
        drafted: {
          summary: 'Version 3 drafted while version 2 is live',
          value: {
            template: {
              alias: 'welcome',
              name: 'Welcome mail',
              published_version: 2,
              versions: [
                { version: 3, status: 'draft', created_at: at },
                { version: 2, status: 'published', created_at: at },
                { version: 1, status: 'superseded', created_at: at },
              ],
            },
            version: 3,
          },
        },
      },
    },
  },
  'template-publish': {
    request: templatePublishRequest,
    requestIn: 'body',
    response: templatePublishResponse,
    // 112: no such template or version; 111: its layout does not exist or has nothing published.
    errors: [Code.CommitFailed, Code.MethodValidation, Code.NotFound],
    examples: {
      request: {
        latest: { summary: 'Publish the latest version', value: { alias: 'welcome' } },
        rollback: { summary: 'Roll back to version 1', value: { alias: 'welcome', version: 1 } },
      },
      response: {
        rolledBack: {
          summary: 'Version 1 is live again',
          value: {
            template: {
              alias: 'welcome',
              name: 'Welcome mail',
              published_version: 1,
              versions: [
                { version: 2, status: 'superseded', created_at: at },
                { version: 1, status: 'published', created_at: at },
              ],
            },
            version: 1,
          },
        },
      },
    },
  },
  'template-query': {
    request: templateQueryRequest,
    requestIn: 'body',
    response: templateQueryResponse,
    // 112: no such template or version.
    errors: [Code.NotFound],
    examples: {
      request: {
        one: { summary: 'A template with its latest version', value: { alias: 'welcome' } },
        page: { summary: 'Your templates', value: { filters: { limit: 50 } } },
      },
      response: {
        one: {
          summary: 'The template and version 1',
          value: {
            template: {
              alias: 'welcome',
              name: 'Welcome mail',
              published_version: 1,
              versions: [{ version: 1, status: 'published', created_at: at }],
            },
            version: {
              version: 1,
              status: 'published',
              created_at: at,
              subject: 'Welcome, {{user.first_name}}',
              html: '<h1>Hello {{user.first_name}}</h1>',
              text: null,
              layout_alias: null,
            },
          },
        },
      },
    },
  },
  'template-delete': {
    request: templateDeleteRequest,
    requestIn: 'body',
    response: templateDeleteResponse,
    // 112: no such template; 111: another template uses it as its layout.
    errors: [Code.CommitFailed, Code.MethodValidation, Code.NotFound],
    examples: {
      request: { one: { summary: 'Delete a template', value: { alias: 'welcome' } } },
      response: {
        deleted: {
          summary: 'Deleted',
          value: {
            template: {
              alias: 'welcome',
              name: 'Welcome mail',
              published_version: 1,
              versions: [{ version: 1, status: 'published', created_at: at }],
            },
            version: null,
            deleted: true,
          },
        },
      },
    },
  },
  'template-render': {
    request: templateRenderRequest,
    requestIn: 'body',
    response: templateRenderResponse,
    // 112: no such template, version or layout. Problems of the template or model are data.
    errors: [Code.NotFound],
    examples: {
      request: {
        inline: {
          summary: 'Preview what the editor holds',
          value: {
            subject: 'Hi {{name}}',
            html: '<p>Hello {{name}}</p>\n<p>{{plan.title}}</p>',
            model: { name: 'Ada' },
          },
        },
        stored: {
          summary: 'Preview a stored version',
          value: { alias: 'welcome', version: 2, model: { user: { first_name: 'Ada' } } },
        },
      },
      response: {
        withErrors: {
          summary: 'Rendered, with a missing variable named',
          value: {
            subject: 'Hi Ada',
            html: '<p>Hello Ada</p>\n<p></p>',
            text: 'Hello Ada',
            errors: [{ part: 'html', line: 2, message: 'plan.title is not in the model' }],
            suggested_model: { name: 'name_Value', plan: { title: 'title_Value' } },
          },
        },
      },
    },
  },
};
