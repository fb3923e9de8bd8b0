import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

/** Who is calling, as established by the Bearer credential: a JWT or an API key. */
export interface Caller {
  account: string;
  subject: string;
  scopes: ReadonlySet<string>;
  credential: 'jwt' | 'api_key';
  /** The API key's id (`credential: 'api_key'`). */
  keyId?: string;
  /** The key's domain restriction: the only domains it may send from or read the records of. */
  domains?: readonly string[];
  /** The key's own request rate limit, requests a second. */
  rateLimitRps?: number;
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
