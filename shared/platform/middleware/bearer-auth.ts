import type { MiddlewareObj } from '@middy/core';
import { isAccountActive } from '../auth/account-status.ts';
import { looksLikeApiKey } from '../auth/api-key-format.ts';
import { noteKeyUse } from '../auth/api-key-usage.ts';
import { verifyApiKey } from '../auth/api-key-verifier.ts';
import { verifyToken } from '../auth/token-verifier.ts';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult, Caller } from '../http/api-types.ts';

const bearer = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)[ ]*$/i;

async function apiKeyCaller(token: string, sourceIp: string, now: number): Promise<Caller> {
  const record = await verifyApiKey(token, sourceIp, now);
  // The usage write runs beside the request, never before its answer, and never fails it: a lost
  // write only leaves last_used_at a minute older.
  noteKeyUse(record.keyId, record.lastUsedAt, now)?.catch(() => undefined);
  const caller: Caller = {
    account: record.account,
    subject: `apikey:${record.keyId}`,
    scopes: new Set(record.scopes),
    credential: 'api_key',
    keyId: record.keyId,
  };
  if (record.domains.length > 0) caller.domains = record.domains;
  if (record.rateLimitRps !== undefined) caller.rateLimitRps = record.rateLimitRps;
  return caller;
}

/**
 * Missing header → 104; expired or not yet valid → 105; any other bad token or disabled account →
 * 110. A credential starting `svc_` is an API key (docs/apikeys.md): malformed, unknown, wrong or
 * revoked → 110, expired → 105, from a network the key does not allow → 103; anything else is a JWT.
 */
export function bearerAuth(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'bearerAuth',
    before: async ({ event, context }) => {
      const header = event.headers.authorization;
      if (header === undefined || header.trim() === '') throw new ServiceError(Code.AuthorizationMissing);
      const match = bearer.exec(header);
      if (match?.[1] === undefined)
        throw new ServiceError(Code.TokenInvalid, 'Authorization is not a Bearer token');
      if (looksLikeApiKey(match[1])) {
        // The key's item carries its account's status (verifyApiKey): no second read.
        context.caller = await apiKeyCaller(match[1], context.sourceIp, Date.now());
        return;
      }
      const caller = { ...(await verifyToken(match[1])), credential: 'jwt' as const };
      if (!(await isAccountActive(caller.account))) {
        throw new ServiceError(Code.TokenInvalid, 'Account is disabled');
      }
      context.caller = caller;
    },
  };
}
