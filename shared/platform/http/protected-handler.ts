import { bearerAuth } from '../middleware/bearer-auth.ts';
import { accountRateLimit } from '../middleware/rate-limit.ts';
import { requireScopes } from '../middleware/require-scopes.ts';
import { observabilityMiddlewares } from '../observability/powertools.ts';
import type { ApiResult, Caller } from './api-types.ts';
import { type ApiRequest, buildChain, type ChainOptions } from './chain.ts';
import { inputChecks } from './input-checks.ts';
import type { Route } from './route.ts';

/**
 * A handler for a route that needs a Bearer token with the route's scopes. These functions carry
 * the AWS SDK and jose anyway, so Powertools Logger and Metrics are a small share of them.
 */
export function protectedHandler<TInput = undefined>(
  route: Route,
  options: ChainOptions<TInput>,
  action: (request: ApiRequest<TInput, Caller>) => Promise<ApiResult>,
) {
  return buildChain<TInput, Caller>(
    route,
    {
      observability: observabilityMiddlewares(),
      auth: [bearerAuth(), accountRateLimit(), requireScopes(route.scopes)],
      input: inputChecks(options.input),
    },
    action,
  );
}
