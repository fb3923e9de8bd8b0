import { isIP } from 'node:net';
import * as z from 'zod/mini';
import { incomingDate, serverDate } from '../platform/schemas/dates.ts';
import { describe, documented, requiredTogether } from '../platform/schemas/describe.ts';
import { presets, scopeNames } from './model/scopes.ts';

/**
 * Request and response schemas of the API key routes and whoami, the single source for
 * validation, types and the OpenAPI document. Requests are strict: an unknown field is 107.
 */

export const maxKeyDomains = 10;
export const maxKeyCidrs = 10;
export const maxKeyNameLength = 100;
export const maxGraceSeconds = 604_800;
export const maxKeyRateLimitRps = 10_000;

const keyId = describe(
  z
    .string({ error: 'key_id must be a string' })
    .check(z.regex(/^[a-z2-7]{16}$/, 'key_id is 16 characters a-z, 2-7')),
  'The key id: 16 characters of base32 (a-z, 2-7), the part of the key after svc_live_',
  'k3y5abcdefgh2345',
);

const scope = z.enum(scopeNames as [string, ...string[]], {
  error: (issue) => `unknown scope ${JSON.stringify(issue.input)}: one of ${scopeNames.join(', ')}`,
});

/** A CIDR (`192.0.2.0/24`, `2001:db8::/32`) or a single address. */
export function isCidr(value: string): boolean {
  const [address = '', prefix, extra] = value.split('/');
  if (extra !== undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

const cidr = describe(
  z.string({ error: 'a CIDR must be a string' }).check(
    z.refine(isCidr, {
      error: (issue) => `${JSON.stringify(issue.input)} is not an IP network such as 192.0.2.0/24`,
    }),
  ),
  'An IP network in CIDR notation, or one address',
  '192.0.2.0/24',
);

const domainName = describe(
  z
    .string({ error: 'a domain must be a string' })
    .check(
      z.minLength(1, 'a domain must not be empty'),
      z.maxLength(253, 'a domain is at most 253 characters'),
    ),
  'One of your registered sending domains',
  'example.org',
);

export const apikeyAddRequest = documented(
  describe(
    z
      .strictObject({
        name: describe(
          z
            .string({ error: 'name must be a string' })
            .check(
              z.minLength(1, 'name must not be empty'),
              z.maxLength(maxKeyNameLength, `name is at most ${maxKeyNameLength} characters`),
            ),
          'What the key is for, as you will recognise it in the list',
          'Production app',
        ),
        scopes: z.optional(
          describe(
            z
              .array(scope, { error: 'scopes must be a list of scopes' })
              .check(z.minLength(1, 'scopes must name at least one scope')),
            'The scopes of the key, each one you hold yourself (else 113)',
          ),
        ),
        preset: z.optional(
          describe(
            z.enum(presets, { error: `preset must be one of ${presets.join(', ')}` }),
            'Instead of scopes: full_access (every scope you hold; the default) or sending_access (messages:send alone)',
            'sending_access',
          ),
        ),
        domains: z.optional(
          describe(
            z
              .array(domainName, { error: 'domains must be a list of domains' })
              .check(z.maxLength(maxKeyDomains, `domains holds at most ${maxKeyDomains} domains`)),
            `Up to ${maxKeyDomains} of your domains: the key may send from and read the records of these only`,
          ),
        ),
        allowed_cidrs: z.optional(
          describe(
            z
              .array(cidr, { error: 'allowed_cidrs must be a list of networks' })
              .check(z.maxLength(maxKeyCidrs, `allowed_cidrs holds at most ${maxKeyCidrs} networks`)),
            `Up to ${maxKeyCidrs} networks the key may be used from (103 from anywhere else)`,
          ),
        ),
        expires_at: z.optional(
          incomingDate('expires_at', 'When the key stops working (105 after); in the future'),
        ),
        rate_limit_rps: z.optional(
          describe(
            z
              .int({ error: 'rate_limit_rps must be a whole number' })
              .check(
                z.minimum(1, 'rate_limit_rps is at least 1'),
                z.maximum(maxKeyRateLimitRps, `rate_limit_rps is at most ${maxKeyRateLimitRps}`),
              ),
            'Requests a second this key may make (115 beyond), within the service-wide limit',
            10,
          ),
        ),
      })
      .check(
        z.refine((value) => value.scopes === undefined || value.preset === undefined, {
          error: 'give either scopes or preset, not both',
          path: ['preset'],
        }),
      ),
    'A new API key: its name, its rights (scopes or a preset) and its restrictions',
  ),
  { not: requiredTogether('scopes', 'preset') },
);
export type ApikeyAddRequest = z.infer<typeof apikeyAddRequest>;

export const keyView = describe(
  z.object({
    key_id: keyId,
    name: z.string(),
    prefix: describe(z.string(), 'The start of the key, svc_live_<key_id>', 'svc_live_k3y5abcdefgh2345'),
    last4: describe(z.string(), 'The last four characters of the secret, to recognise it'),
    scopes: z.array(z.string()),
    domains: describe(
      z.array(z.string()),
      'The domains the key is restricted to; empty: every domain of the account',
    ),
    allowed_cidrs: describe(z.array(z.string()), 'The networks the key may be used from; empty: anywhere'),
    created_at: serverDate('When the key was made'),
    expires_at: z.nullable(serverDate('When the key stops working; null: never')),
    last_used_at: z.nullable(serverDate('When the key was last used, to the minute; null: never')),
    revoked_at: z.nullable(serverDate('When the key was revoked; null: it is not')),
  }),
  'An API key, never its secret',
);

export const apikeyAddResponse = z.object({
  key: describe(
    z.string(),
    'The key, svc_live_<key_id>_<secret>: shown this once, never again. Send it as Authorization: Bearer <key>',
    'svc_live_k3y5abcdefgh2345_q8Xz…',
  ),
  api_key: keyView,
});

export const apikeyQueryRequest = describe(
  z.strictObject({ key_id: z.optional(keyId) }),
  'Either {key_id} for one key, or {} for every key of your account, newest first',
);
export type ApikeyQueryRequest = z.infer<typeof apikeyQueryRequest>;

export const apikeyQueryResponse = z.union([
  z.object({ api_key: keyView }),
  z.object({ api_keys: z.array(keyView), count: describe(z.number(), 'Number of keys') }),
]);

export const apikeyRevokeRequest = describe(
  z.strictObject({ key_id: keyId }),
  'The key to revoke: it stops working within 30 seconds',
);
export type ApikeyRevokeRequest = z.infer<typeof apikeyRevokeRequest>;

export const apikeyRevokeResponse = z.object({ api_key: keyView });

export const apikeyRotateRequest = describe(
  z.strictObject({
    key_id: keyId,
    grace_seconds: z.optional(
      describe(
        z
          .int({ error: 'grace_seconds must be a whole number' })
          .check(
            z.minimum(0, 'grace_seconds is at least 0'),
            z.maximum(maxGraceSeconds, `grace_seconds is at most ${maxGraceSeconds} (7 days)`),
          ),
        'How long the old secret keeps working (default 0: it stops within 30 seconds)',
        3600,
      ),
    ),
  }),
  'The key to give a new secret',
);
export type ApikeyRotateRequest = z.infer<typeof apikeyRotateRequest>;

export const apikeyRotateResponse = apikeyAddResponse;

export const whoamiResponse = z.object({
  account: describe(z.string(), 'The account the credential acts for', 'acct-7f3a'),
  scopes: z.array(z.string()),
  credential: describe(z.enum(['jwt', 'api_key']), 'What kind of credential was presented'),
  key_id: z.optional(describe(z.string(), 'The API key id (API keys only)')),
  domains: describe(
    z.array(z.string()),
    "The domains this credential may send from: the key's restriction, else the account's registered domains",
  ),
});
