import { Code } from '../platform/errors/catalogue.ts';
import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { at, otherUuid, uuid } from '../platform/schemas/examples.ts';
import {
  suppressionAddRequest,
  suppressionAddResponse,
  suppressionDeleteRequest,
  suppressionDeleteResponse,
  suppressionQueryRequest,
  suppressionQueryResponse,
} from './schemas.ts';

export const suppressionQuery = route('suppression-query', 'POST /suppression/query-1.0', [
  'suppressions:read',
]);
export const suppressionAdd = route('suppression-add', 'POST /suppression/add-1.0', ['suppressions:write'], {
  dryRun: true,
});
export const suppressionDelete = route(
  'suppression-delete',
  'POST /suppression/delete-1.0',
  ['suppressions:write'],
  { dryRun: true },
);

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const suppressionsRoutes = [suppressionQuery, suppressionAdd, suppressionDelete] as const;

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
export const suppressionsRouteDetails = {
  'suppression-query': {
    summary: 'One address of your suppression list, or a filtered page of it',
    tag: 'suppressions',
    // The caller's suppression list: read; add (conditional puts, no deletes); delete (no puts).
    access: { table: 'read' },
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
              stream: 'all',
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
                stream: 'all',
                detail: 'abuse',
                message_uuid: otherUuid,
                created_at: at,
              },
              {
                email: 'linus@example.org',
                reason: 'unsubscribed',
                stream: 'broadcast',
                detail: 'One-click unsubscribe (RFC 8058)',
                message_uuid: uuid,
                created_at: at,
              },
            ],
            count: 2,
            next_cursor: null,
          },
        },
      },
    },
  },
  'suppression-add': {
    summary: 'Suppress addresses for your account',
    tag: 'suppressions',
    access: { table: 'write' },
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
    summary: 'Remove addresses from your suppression list',
    tag: 'suppressions',
    access: { table: 'delete' },
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
} as const satisfies RouteDetailsOf<(typeof suppressionsRoutes)[number]>;
