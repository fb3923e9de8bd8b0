import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { Code, type ErrorCode } from '../../shared/platform/errors/catalogue.ts';
import { errorResponse } from '../../shared/platform/http/envelope.ts';
import { methodNotAllowedMessage, requestLimits, tooLargeDetail } from '../../shared/platform/http/limits.ts';
import { matchRoutePath, type Route } from '../../shared/platform/http/route.ts';
import { corsHeaders } from '../../shared/platform/middleware/http-envelope.ts';
import { routes } from '../../shared/routes.ts';
import { responseCollector, settled, trackInvocation } from './after-response-work.ts';
import { type ConsoleSite, handleConsoleRequest } from './console-site.ts';
import { requestedFault, withFault } from './fault-injection.ts';
import { loadFunction } from './function-code.ts';
import { asFunction } from './invocations.ts';
import { lambdaContext } from './lambda-context.ts';
import { proxyEvent } from './proxy-event.ts';

/** API Gateway's and Lambda's payload limit for a synchronous invocation. */
export const maxBodyBytes = requestLimits.maxBodyBytes;

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
/** A route declared `afterResponse`: a response-streaming function (shared/platform/http/after-response.ts). */
type StreamingHandler = (event: APIGatewayProxyEvent, stream: Writable, context: Context) => Promise<void>;

/** The local host's own path (no API Gateway route): answers 204 once no function is at work after its answer. */
export const settledPath = '/_local/settled';

const handlers = new Map<string, Promise<Handler | undefined>>();

/** Loads the route's function: functions/<id>/handler.ts, or its bundle (function-code.ts). */
function loadHandler(route: Route): Promise<Handler | undefined> {
  let loaded = handlers.get(route.id);
  if (loaded === undefined) {
    loaded = loadFunction<Handler>(route.id).catch((error: unknown) => {
      process.stderr.write(`cannot load ${route.id}: ${String(error)}\n`);
      return undefined;
    });
    handlers.set(route.id, loaded);
  }
  return loaded;
}

function toEvent(
  request: IncomingMessage,
  url: URL,
  route: Route,
  body: Buffer,
  requestId: string,
  pathParameters: Record<string, string> | null,
): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] as string;
    const value = request.rawHeaders[i + 1] as string;
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    multiQuery[name] = [...(multiQuery[name] ?? []), value];
  }
  const hasQuery = Object.keys(query).length > 0;
  return proxyEvent({
    route,
    path: url.pathname,
    headers,
    multiValueHeaders,
    query: hasQuery ? query : null,
    multiQuery: hasQuery ? multiQuery : null,
    pathParameters,
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
    stage: 'local',
    protocol: `HTTP/${request.httpVersion}`,
    requestId,
    sourceIp: normaliseAddress(request.socket.remoteAddress ?? ''),
    userAgent: request.headers['user-agent'] ?? null,
  });
}

/** The `{name}` segments of a matched route's path, or null for a path without any (as API Gateway). */
function pathParametersOf(route: Route, pathname: string): Record<string, string> | null {
  const parameters = matchRoutePath(route.path, pathname) ?? {};
  return Object.keys(parameters).length === 0 ? null : parameters;
}

function normaliseAddress(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

function send(response: ServerResponse, result: APIGatewayProxyResult, requestId: string): void {
  const headers: Record<string, string> = { 'x-request-id': requestId };
  for (const [name, value] of Object.entries(result.headers ?? {}))
    headers[name.toLowerCase()] = String(value);
  const body = result.isBase64Encoded
    ? Buffer.from(result.body, 'base64')
    : Buffer.from(result.body ?? '', 'utf8');
  headers['content-length'] = String(body.length);
  response.writeHead(result.statusCode, headers);
  response.end(body);
}

function gatewayError(
  code: ErrorCode,
  message?: string,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return errorResponse(code, message, undefined, { ...corsHeaders(undefined), ...headers });
}

function readBody(request: IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(size > maxBodyBytes ? 'too-large' : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/**
 * What API Gateway does in front of the functions: route matching (unknown path → 100, wrong
 * method → 102, OPTIONS → 101 with CORS, all without invoking a function), the payload limit
 * (406 / 107, naming the limit in MB) and the header limit (431 / 107), the event shape, and a 5xx envelope (code 2) when
 * a function itself fails.
 */
export async function handleGatewayRequest(
  request: IncomingMessage,
  response: ServerResponse,
  consoleSite?: ConsoleSite,
): Promise<void> {
  const requestId = randomUUID();
  const url = new URL(request.url ?? '/', 'http://localhost');
  // The web console's files (on AWS: CloudFront, not API Gateway).
  if (consoleSite !== undefined && handleConsoleRequest(request, response, url, consoleSite)) return;
  if (url.pathname === settledPath && request.method === 'GET') {
    request.resume();
    await settled();
    response.writeHead(204, { 'x-request-id': requestId }).end();
    return;
  }
  const candidates = routes.filter((route) => matchRoutePath(route.path, url.pathname) !== undefined);
  if (candidates.length === 0) {
    request.resume();
    return send(
      response,
      gatewayError(Code.EndpointNotConfigured, `No endpoint at ${url.pathname}`),
      requestId,
    );
  }
  const allow = candidates.map((route) => route.method).join(', ');
  if (request.method === 'OPTIONS') {
    request.resume();
    return send(
      response,
      gatewayError(Code.Options, undefined, {
        ...corsHeaders(request.headers.origin),
        'access-control-allow-methods': `${allow}, OPTIONS`,
        'access-control-allow-headers': 'authorization, content-type, idempotency-key',
        'access-control-max-age': '600',
      }),
      requestId,
    );
  }
  const route = candidates.find((candidate) => candidate.method === request.method);
  if (route === undefined) {
    request.resume();
    return send(
      response,
      gatewayError(Code.MethodNotAllowed, methodNotAllowedMessage(url.pathname, allow), { allow }),
      requestId,
    );
  }
  const body = await readBody(request);
  if (body === 'too-large') {
    // 107 with the catalogue's status (406), as API Gateway's REQUEST_TOO_LARGE response in the stack.
    return send(
      response,
      errorResponse(Code.InvalidInput, undefined, [tooLargeDetail], corsHeaders(undefined)),
      requestId,
    );
  }
  const loaded = await loadHandler(route);
  if (loaded === undefined) {
    return send(response, gatewayError(Code.ActionNotMapped), requestId);
  }
  const event = toEvent(request, url, route, body, requestId, pathParametersOf(route, url.pathname));
  try {
    const result = route.afterResponse
      ? await streamedInvocation(route, loaded as unknown as StreamingHandler, event, requestId)
      : await asFunction(route.id, () =>
          withFault(requestedFault(request), loaded)(event, lambdaContext(route.id, requestId)),
        );
    send(response, result, requestId);
  } catch (error) {
    // Whatever a function throws (a RangeError from a runaway recursion included) is its own
    // failure: code 2 for this request, the request id in the log line, and the host keeps serving.
    process.stderr.write(
      `function ${route.id} failed (request ${requestId}): ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`,
    );
    send(response, gatewayError(Code.Internal), requestId);
  }
}

/**
 * A streaming function's answer, as API Gateway's streamed integration gives it: when the function
 * ends its response stream; the invocation goes on (tracked until it returns). A function that
 * fails, or returns without ending its stream, fails the request.
 */
async function streamedInvocation(
  route: Route,
  handler: StreamingHandler,
  event: APIGatewayProxyEvent,
  requestId: string,
): Promise<APIGatewayProxyResult> {
  const { stream, response } = responseCollector();
  const invocation = asFunction(route.id, () => handler(event, stream, lambdaContext(route.id, requestId)));
  trackInvocation(invocation);
  invocation.then(
    () => {
      if (!stream.writableFinished)
        stream.destroy(new Error('the function returned without ending its response'));
    },
    (error: unknown) => {
      if (stream.writableFinished) {
        process.stderr.write(
          `function ${route.id} failed after its answer (request ${requestId}): ${String(error)}\n`,
        );
      } else stream.destroy(error instanceof Error ? error : new Error(String(error)));
    },
  );
  return await Promise.race([response, new Promise<never>((_, reject) => stream.once('error', reject))]);
}

export async function startGateway(
  host: string,
  port: number,
  consoleSite?: ConsoleSite,
): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    handleGatewayRequest(request, response, consoleSite).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  server.keepAliveTimeout = 5_000;
  // Headers beyond Node's limit (16 KB; API Gateway's is 10 KB) never reach a handler: answer in the
  // envelope, like the payload limit (431 / 107), instead of Node's bare, empty 431.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (error.code !== 'HPE_HEADER_OVERFLOW' || !socket.writable) return socket.destroy();
    const requestId = randomUUID();
    const result = gatewayError(Code.InvalidInput, 'Request headers are too large');
    const body = Buffer.from(result.body, 'utf8');
    const headers = {
      ...result.headers,
      'x-request-id': requestId,
      'content-length': String(body.length),
      connection: 'close',
    };
    socket.end(
      `HTTP/1.1 431 Request Header Fields Too Large\r\n${Object.entries(headers)
        .map(([name, value]) => `${name.toLowerCase()}: ${value}`)
        .join('\r\n')}\r\n\r\n${body.toString('utf8')}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return { url: `http://${host}:${actualPort}`, server };
}
