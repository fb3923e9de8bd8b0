import { bearerAuth } from '../middleware/bearer-auth.ts';
import { accountRateLimit } from '../middleware/rate-limit.ts';
import { requireScopes } from '../middleware/require-scopes.ts';
import { type RouteId, routeById } from '../routes.ts';
import type { ApiResult, Caller } from './api-types.ts';
import { type ApiRequest, buildChain, type ChainOptions } from './chain.ts';

/** A handler for a route that needs a Bearer token with the route's scopes. */
export function protectedHandler<TInput = undefined>(
  routeId: RouteId,
  options: ChainOptions<TInput>,
  action: (request: ApiRequest<TInput, Caller>) => Promise<ApiResult>,
) {
  const route = routeById(routeId);
  return buildChain<TInput, Caller>(
    routeId,
    [bearerAuth(), accountRateLimit(), requireScopes(route.scopes)],
    options,
    action,
  );
}
