import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { at } from '../platform/schemas/examples.ts';
import { healthResponse, keepaliveStatusResponse } from './schemas.ts';

export const health = route('health', 'GET /health', [], { public: true });
export const keepaliveStatus = route('keepalive-status', 'GET /keepalive-1.0', [], { public: true });
export const openapi = route('openapi', 'GET /openapi.json', [], { public: true });

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const serviceRoutes = [health, keepaliveStatus, openapi] as const;

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
export const serviceRouteDetails = {
  health: {
    summary: 'Service health and the caller address',
    tag: 'service',
    // Public routes: nothing to touch.
    access: {},
    response: healthResponse,
    examples: { response: { ok: { summary: 'Healthy', value: { status: 'ok', caller_ip: '203.0.113.7' } } } },
  },
  'keepalive-status': {
    summary: 'Uptime probe',
    tag: 'service',
    access: {},
    response: keepaliveStatusResponse,
    examples: { response: { alive: { summary: 'Alive', value: { status: 'alive', at } } } },
  },
  openapi: {
    summary: 'This API as an OpenAPI 3.0 document',
    tag: 'service',
    access: {},
    raw: { description: 'This API as an OpenAPI 3.0.3 document' },
  },
} as const satisfies RouteDetailsOf<(typeof serviceRoutes)[number]>;
