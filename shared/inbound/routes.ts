import { Code } from '../platform/errors/catalogue.ts';
import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { at, inboundExampleId } from '../platform/schemas/examples.ts';
import { inboundExampleSummary } from './examples.ts';
import {
  inboundDeleteRequest,
  inboundDeleteResponse,
  inboundQueryRequest,
  inboundQueryResponse,
} from './schemas.ts';

export const inboundQuery = route('inbound-query', 'POST /inbound/query-1.0', ['inbound:read']);
export const inboundDelete = route('inbound-delete', 'POST /inbound/delete-1.0', ['inbound:write']);

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const inboundRoutes = [inboundQuery, inboundDelete] as const;

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
export const inboundRouteDetails = {
  'inbound-query': {
    summary: 'One received message in full, or a filtered page of received mail',
    tag: 'inbound',
    // Presigned GETs of the raw message and attachments, and the content object.
    access: { table: 'read', objects: { 'inbound/': ['read'] } },
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
            content_url: null,
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
    summary: 'Delete a received message and its stored content',
    tag: 'inbound',
    // The only function that deletes received mail and its objects.
    access: { table: 'delete', objects: { 'inbound/': ['delete'] } },
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
} as const satisfies RouteDetailsOf<(typeof inboundRoutes)[number]>;
