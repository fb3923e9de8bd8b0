import middy, { type MiddlewareObj } from '@middy/core';
import { dryRunGuard, isDryRun } from '../middleware/dry-run.ts';
import { httpEnvelope } from '../middleware/http-envelope.ts';
import { networkRule } from '../middleware/network-rule.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import type { InputSource } from '../middleware/validate-input.ts';
import type { ApiContext, ApiEvent, ApiResult, Caller } from './api-types.ts';
import type { Route } from './route.ts';

type Middleware = MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext>;

/** What an action sees: the validated input and the facts the chain established. */
export interface ApiRequest<TInput, TCaller extends Caller | undefined> {
  input: TInput;
  caller: TCaller;
  dryRun: boolean;
  requestId: string;
  sourceIp: string;
  event: ApiEvent;
  context: ApiContext;
}

export interface InputSchema<T> {
  readonly '~standard': { validate: (value: unknown) => unknown };
  readonly '~output'?: T;
}

export interface InputOption<TInput> {
  schema: InputSchema<TInput>;
  from: InputSource;
}

export interface ChainOptions<TInput> {
  input?: InputOption<TInput>;
}

/** The middlewares a handler kind brings to the chain; the chain puts them in their places. */
export interface ChainParts {
  /**
   * Powertools' Logger and Metrics middlewares (shared/platform/observability/powertools.ts), outermost.
   * Left out by the lean public functions, which log through log.ts's own writers.
   */
  observability?: Middleware[];
  auth?: Middleware[];
  /** JSON body and validation (input-checks.ts), for a route that takes input. */
  input?: Middleware[];
}

/**
 * Builds the Middy chain in the order of docs/decisions/0002-order-of-the-checks.md: [Powertools Logger context and
 * Metrics flush] → envelope (request id, errors, request log line, latency) →
 * network rule → rate limit → [auth → scopes] → dry-run guard → JSON body → validation → action.
 */
export function buildChain<TInput, TCaller extends Caller | undefined>(
  route: Route,
  parts: ChainParts,
  action: (request: ApiRequest<TInput, TCaller>) => Promise<ApiResult>,
) {
  const chain = middy<ApiEvent, ApiResult, Error, ApiContext>();
  for (const middleware of parts.observability ?? []) chain.use(middleware);
  chain
    .use(httpEnvelope({ routeKey: `${route.method} ${route.path}`, isPublic: route.public }))
    .use(networkRule())
    .use(rateLimit({ isPublic: route.public }));
  for (const middleware of parts.auth ?? []) chain.use(middleware);
  chain.use(dryRunGuard(route.dryRun));
  for (const middleware of parts.input ?? []) chain.use(middleware);
  return chain.handler(async (event, context) =>
    action({
      input: event.input as TInput,
      caller: context.caller as TCaller,
      dryRun: isDryRun(event),
      requestId: context.requestId,
      sourceIp: context.sourceIp,
      event,
      context,
    }),
  );
}
