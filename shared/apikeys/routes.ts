import { Code } from '../platform/errors/catalogue.ts';
import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { at } from '../platform/schemas/examples.ts';
import {
  apikeyAddRequest,
  apikeyAddResponse,
  apikeyQueryRequest,
  apikeyQueryResponse,
  apikeyRevokeRequest,
  apikeyRevokeResponse,
  apikeyRotateRequest,
  apikeyRotateResponse,
  whoamiResponse,
} from './schemas.ts';

export const apikeyAdd = route('apikey-add', 'POST /apikey/add-1.0', ['keys:write']);
export const apikeyQuery = route('apikey-query', 'POST /apikey/query-1.0', ['keys:read']);
export const apikeyRevoke = route('apikey-revoke', 'POST /apikey/revoke-1.0', ['keys:write']);
export const apikeyRotate = route('apikey-rotate', 'POST /apikey/rotate-1.0', ['keys:write']);
/** Any valid credential, no scope: what a client, a CLI or the SMTP submission server checks a key with. */
export const whoami = route('whoami', 'GET /whoami-1.0', []);

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const apikeysRoutes = [apikeyAdd, apikeyQuery, apikeyRevoke, apikeyRotate, whoami] as const;

const keyId = 'k3y5abcdefgh2345';
const view = {
  key_id: keyId,
  name: 'Production app',
  prefix: `svc_live_${keyId}`,
  last4: 'Xz9Q',
  scopes: ['messages:send'],
  domains: ['example.org'],
  allowed_cidrs: [],
  created_at: at,
  expires_at: null,
  last_used_at: null,
  revoked_at: null,
};
const key = `svc_live_${keyId}_q8XzR2mVn4Lb7TcW1yKpD0sHfJ3gUaEoI6rNwZ5Xz9Q`;

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route. No function imports it, so it stays out of every bundle.
 */
export const apikeysRouteDetails = {
  'apikey-add': {
    summary: 'Make an API key: its secret is answered this once',
    tag: 'apikeys',
    // Reads the account's domains; puts the key item.
    access: { table: 'write' },
    request: apikeyAddRequest,
    requestIn: 'body',
    response: apikeyAddResponse,
    errors: [],
    examples: {
      request: {
        sending: {
          summary: 'A sending key for one domain',
          value: { name: 'Production app', preset: 'sending_access', domains: ['example.org'] },
        },
      },
      response: { made: { summary: 'The key, shown once', value: { key, api_key: view } } },
    },
  },
  'apikey-query': {
    summary: 'One API key of your account, or all of them',
    tag: 'apikeys',
    access: { table: 'read' },
    request: apikeyQueryRequest,
    requestIn: 'body',
    response: apikeyQueryResponse,
    errors: [Code.NotFound],
    examples: {
      request: {
        one: { summary: 'One key', value: { key_id: keyId } },
        all: { summary: 'Every key', value: {} },
      },
      response: {
        one: { summary: 'One key', value: { api_key: view } },
        all: { summary: 'Every key', value: { api_keys: [view], count: 1 } },
      },
    },
  },
  'apikey-revoke': {
    summary: 'Revoke an API key: refused everywhere within 30 seconds',
    tag: 'apikeys',
    access: { table: 'write' },
    request: apikeyRevokeRequest,
    requestIn: 'body',
    response: apikeyRevokeResponse,
    errors: [Code.NotFound],
    examples: {
      request: { one: { summary: 'Revoke a key', value: { key_id: keyId } } },
      response: { revoked: { summary: 'Revoked', value: { api_key: { ...view, revoked_at: at } } } },
    },
  },
  'apikey-rotate': {
    summary: 'Give an API key a new secret; the old one works for a grace period',
    tag: 'apikeys',
    access: { table: 'write' },
    request: apikeyRotateRequest,
    requestIn: 'body',
    response: apikeyRotateResponse,
    errors: [Code.NotFound, Code.MethodValidation],
    examples: {
      request: {
        hour: { summary: 'Old secret works one more hour', value: { key_id: keyId, grace_seconds: 3600 } },
      },
      response: { rotated: { summary: 'The new key, shown once', value: { key, api_key: view } } },
    },
  },
  whoami: {
    summary: 'What the presented credential is and may do',
    tag: 'apikeys',
    // Reads the key and the account's domains.
    access: { table: 'read' },
    response: whoamiResponse,
    examples: {
      response: {
        key: {
          summary: 'A sending key',
          value: {
            account: 'acct-7f3a',
            scopes: ['messages:send'],
            credential: 'api_key',
            key_id: keyId,
            domains: ['example.org'],
          },
        },
        jwt: {
          summary: 'A JWT',
          value: {
            account: 'acct-7f3a',
            scopes: ['messages:send', 'messages:read'],
            credential: 'jwt',
            domains: ['example.org'],
          },
        },
      },
    },
  },
} as const satisfies RouteDetailsOf<(typeof apikeysRoutes)[number]>;
