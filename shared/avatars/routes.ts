import { Code } from '../platform/errors/catalogue.ts';
import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { at } from '../platform/schemas/examples.ts';
import { avatarGetRequest, avatarGetResponse, keepaliveRunRequest, keepaliveRunResponse } from './schemas.ts';

export const keepaliveRun = route('keepalive-run', 'POST /keepalive-1.0', ['keepalive:run']);
export const avatarGet = route('avatar-get', 'GET /avatar/get-1.0', ['avatars:read']);

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const avatarsRoutes = [keepaliveRun, avatarGet] as const;

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
export const avatarsRouteDetails = {
  'keepalive-run': {
    summary: 'Run avatar housekeeping',
    tag: 'avatars',
    schedule: { everyMinutes: 60 },
    // Avatar housekeeping: lists and removes expired cache entries, only under avatars/, and keeps
    // its resume cursor under housekeeping/ (docs/avatars.md).
    access: {
      table: 'read',
      objects: { 'avatars/': ['read', 'delete'], 'housekeeping/': ['read', 'write'] },
      avatars: true,
    },
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
  'avatar-get': {
    summary: 'Avatar image URL for an e-mail address',
    tag: 'avatars',
    // Cache in S3 under avatars/, returns presigned GET URLs.
    access: { table: 'read', objects: { 'avatars/': ['read', 'write'] }, avatars: true },
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
} as const satisfies RouteDetailsOf<(typeof avatarsRoutes)[number]>;
