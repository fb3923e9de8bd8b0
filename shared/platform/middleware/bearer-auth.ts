import type { MiddlewareObj } from '@middy/core';
import { isAccountActive } from '../auth/account-status.ts';
import { verifyToken } from '../auth/token-verifier.ts';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';

const bearer = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)[ ]*$/i;

/** Missing header → 104; expired or not yet valid → 105; any other bad token or disabled account → 110. */
export function bearerAuth(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'bearerAuth',
    before: async ({ event, context }) => {
      const header = event.headers.authorization;
      if (header === undefined || header.trim() === '') throw new ServiceError(Code.AuthorizationMissing);
      const match = bearer.exec(header);
      if (match?.[1] === undefined)
        throw new ServiceError(Code.TokenInvalid, 'Authorization is not a Bearer token');
      const token = await verifyToken(match[1]);
      if (!(await isAccountActive(token.account))) {
        throw new ServiceError(Code.TokenInvalid, 'Account is disabled');
      }
      context.caller = token;
    },
  };
}
