import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { lambdaContext } from '../../infra/local/lambda-context.ts';
import { proxyEvent } from '../../infra/local/proxy-event.ts';
import { type RouteId, routeById } from '../../shared/routes.ts';
import { openApiProblems } from './contract.ts';

/**
 * Calls a Lambda handler the way API Gateway would, with no server: an API Gateway proxy event
 * (the shape infra/local/gateway.ts builds) and a Lambda context, as Middy's own tests and
 * cdk-serverless's `LambdaRestUnitTest` do. The answer is checked against docs/openapi.json like
 * `call()` in host.ts does over HTTP, unless the test gives a reason not to.
 */
export interface EventOptions {
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** JSON-encoded with content-type application/json (unless the test names another). */
  body?: unknown;
  /** Sent as it is. */
  rawBody?: string;
  isBase64Encoded?: boolean;
  /**
   * The gateway's view of the TCP peer (`requestContext.identity.sourceIp`); by default an address
   * of its own in 198.18.0.0/15 (set aside for tests), so requests share no rate-limit bucket.
   */
  sourceIp?: string;
  /** API Gateway's request id (`requestContext.requestId`); a fresh one when absent. */
  requestId?: string;
}

let addresses = 0;
function freshAddress(): string {
  addresses += 1;
  return `198.${18 + (addresses >> 16)}.${(addresses >> 8) & 255}.${addresses & 255}`;
}

export function apiEvent(routeId: RouteId, options: EventOptions = {}): APIGatewayProxyEvent {
  const route = routeById(routeId);
  const headers: Record<string, string> = { ...options.headers };
  let body = options.rawBody ?? null;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
      headers['Content-Type'] = 'application/json';
  }
  const query = options.query === undefined || Object.keys(options.query).length === 0 ? null : options.query;
  return proxyEvent({
    route,
    path: route.path,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    query,
    multiQuery:
      query === null
        ? null
        : Object.fromEntries(Object.entries(query).map(([name, value]) => [name, [value]])),
    pathParameters: null,
    body,
    isBase64Encoded: options.isBase64Encoded ?? false,
    stage: 'unit',
    protocol: 'HTTP/1.1',
    requestId: options.requestId ?? randomUUID(),
    sourceIp: options.sourceIp ?? freshAddress(),
    userAgent: 'unit-test',
  });
}

export interface HandlerAnswer<T = any> {
  status: number;
  /** Lower-cased, as the gateway passes them on. */
  headers: Headers;
  body: T;
  text: string;
  result: APIGatewayProxyResult;
}

/** Handlers extend the event and context types in their own ways. */
type Handler = (event: any, context: any) => Promise<unknown>;

/** Invokes `handler` for `routeId` with an event built from `options` and a fresh Lambda context. */
export async function invoke<T = any>(
  handler: Handler,
  routeId: RouteId,
  options: EventOptions & { skipContract?: string; context?: Context } = {},
): Promise<HandlerAnswer<T>> {
  const event = apiEvent(routeId, options);
  const context = options.context ?? lambdaContext(routeId, randomUUID());
  const result = (await handler(event, context)) as APIGatewayProxyResult;
  const headers = new Headers();
  for (const [name, value] of Object.entries(result.headers ?? {})) headers.set(name, String(value));
  const text = result.isBase64Encoded ? Buffer.from(result.body, 'base64').toString('utf8') : result.body;
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  const answer = { status: result.statusCode, headers, body: body as T, text, result };
  if (options.skipContract === undefined || options.skipContract.trim() === '') {
    const route = routeById(routeId);
    const problems = openApiProblems(route.method, route.path, answer);
    if (problems.length > 0)
      throw new Error(`Response does not match docs/openapi.json:\n${problems.join('\n')}`);
  }
  return answer;
}
