import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

/** Who is calling, as established by the Bearer token. */
export interface Caller {
  account: string;
  subject: string;
  scopes: ReadonlySet<string>;
}

/** Lambda's context, extended by the middleware chain as the request moves through it. */
export interface ApiContext extends Context {
  requestId: string;
  sourceIp: string;
  startedAt: number;
  routeKey: string;
  caller?: Caller;
  /** Token-bucket key and state, for the RateLimit-* response headers. */
  rateLimitHeaders?: Record<string, string>;
}

export interface ApiEvent extends APIGatewayProxyEvent {
  /** Set by the JSON body parser. */
  jsonBody?: unknown;
  /** Set by the validator: the parsed, typed input (body or query). */
  input?: unknown;
}

export type ApiResult = APIGatewayProxyResult;
