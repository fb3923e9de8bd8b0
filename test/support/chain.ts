import type { MiddlewareObj } from '@middy/core';
import type { ApiContext, ApiEvent, ApiResult } from '../../shared/platform/http/api-types.ts';
import { type ApiRequest, buildChain, type InputSchema } from '../../shared/platform/http/chain.ts';
import { dataResponse } from '../../shared/platform/http/envelope.ts';
import { inputChecks } from '../../shared/platform/http/input-checks.ts';
import { accountRateLimit } from '../../shared/platform/middleware/rate-limit.ts';
import { requireScopes } from '../../shared/platform/middleware/require-scopes.ts';
import type { InputSource } from '../../shared/platform/middleware/validate-input.ts';
import { type RouteId, routeById } from '../../shared/routes.ts';

/*
 * protectedHandler's chain (shared/platform/http/protected-handler.ts) for unit tests: the same
 * middlewares in the same order, without Powertools and with a stand-in for `bearerAuth`, which
 * needs the identity provider's keys over HTTP and the account record in DynamoDB. The stand-in
 * names the caller as a verified token would: `account` (by default a new one per request, so no
 * two requests share an account's rate-limit bucket) with `scopes`. Requests should still carry an
 * Authorization header, as the rate limit treats requests without one as anonymous.
 */
let accounts = 0;

export const bearer = { authorization: 'Bearer stand-in' };

export function protectedChain<TInput>(
  routeId: RouteId,
  caller: { scopes: readonly string[]; account?: string },
  input: { schema: unknown; from: InputSource } | undefined,
  action: (request: ApiRequest<TInput, any>) => Promise<ApiResult> = async () => dataResponse({}),
) {
  const standIn: MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> = {
    name: 'bearerAuth (stand-in)',
    before: ({ context }) => {
      accounts += 1;
      const account = caller.account ?? `unit-${accounts}`;
      context.caller = { account, subject: account, scopes: new Set(caller.scopes), credential: 'jwt' };
    },
  };
  return buildChain<TInput, any>(
    routeById(routeId),
    {
      auth: [standIn, accountRateLimit(), requireScopes(routeById(routeId).scopes)],
      input: inputChecks(
        input === undefined ? undefined : { schema: input.schema as InputSchema<TInput>, from: input.from },
      ),
    },
    action,
  );
}
