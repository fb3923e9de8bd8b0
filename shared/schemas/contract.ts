import type { $ZodType } from 'zod/v4/core';
import type { ErrorCode } from '../errors/catalogue.ts';
import type { RouteId } from '../routes.ts';
import { avatarGetRequest, avatarGetResponse, keepaliveRunResponse } from './avatars.ts';
import { healthResponse, keepaliveStatusResponse } from './service.ts';

/**
 * The contract registry: route id → the zod schemas of its request and of its success response
 * (the `data` member of the envelope). The OpenAPI generator (infra/openapi/build.ts, `npm run
 * openapi`) reads it; no Lambda imports it, so it may import every area's schemas.
 *
 * To document a route: export `<camelRouteId>Request` / `<camelRouteId>Response` from
 * shared/schemas/<area>.ts and add one entry below, in the block of its area. `errors` lists the
 * route's own codes beyond those the chain derives (auth, scopes, dry run, JSON, validation).
 * A route without an entry is still documented, with an unspecified `data` object.
 */
export type RouteContract = {
  response?: $ZodType;
  errors?: readonly ErrorCode[];
  /** The success body is not the `{"data": …}` envelope (the OpenAPI document itself). */
  raw?: { description: string };
} & ({ request?: undefined; requestIn?: undefined } | { request: $ZodType; requestIn: 'body' | 'query' });

export const contract: Partial<Record<RouteId, RouteContract>> = {
  // service (foundation)
  health: { response: healthResponse },
  'keepalive-status': { response: keepaliveStatusResponse },
  openapi: { raw: { description: 'This API as an OpenAPI 3.0.3 document' } },

  // messages: 'message-add', 'message-query', 'message-delete'

  // domains: 'dkim-status', 'dkim-set-algorithm'

  // avatars (their schemas wrap the envelope, so the entries take its `data` member)
  'avatar-get': {
    request: avatarGetRequest,
    requestIn: 'query',
    response: avatarGetResponse.shape.data,
    errors: [10000001, 10010001],
  },
  'keepalive-run': { response: keepaliveRunResponse.shape.data, errors: [10020001] },
};
