import type { RouteId } from '../routes.ts';
import type { ApiResult } from './api-types.ts';
import { type ApiRequest, buildChain, type ChainOptions } from './chain.ts';

/** A handler for a public route: no token, so neither jose nor the database is bundled. */
export function publicHandler<TInput = undefined>(
  routeId: RouteId,
  options: ChainOptions<TInput>,
  action: (request: ApiRequest<TInput, undefined>) => Promise<ApiResult>,
) {
  return buildChain<TInput, undefined>(routeId, [], options, action);
}
