import type { ApiResult } from './api-types.ts';
import { type ApiRequest, buildChain } from './chain.ts';
import type { Route } from './route.ts';

/**
 * A handler for a public route: no token, so neither jose nor the database is bundled, no input
 * (the path and query are the route's; neither JSON parsing nor zod is bundled), and no
 * Powertools either: these functions log and time requests through log.ts's lean writers, which keep
 * health and GET keepalive within their 20 KB budget (docs/decisions/0010-bundle-budget.md).
 */
export function publicHandler(
  route: Route,
  action: (request: ApiRequest<undefined, undefined>) => Promise<ApiResult>,
) {
  return buildChain<undefined, undefined>(route, {}, action);
}
