import type { Writable } from 'node:stream';
import { describeError, log } from '../observability/log.ts';
import type { ApiContext, ApiEvent, ApiResult } from './api-types.ts';
import type { Route } from './route.ts';

/**
 * Work a function does after its answer has left (routes declared with `afterResponse`,
 * docs/decisions/0056-answer-first-then-record.md): the function is a response-streaming one, it
 * writes the whole response and ends the stream, then runs the work it was given and returns. On
 * AWS the integration streams (API Gateway sends the answer when the stream ends, and Lambda keeps
 * the invocation until the handler returns); the local gateway does the same with the stand-in
 * below. Work that fails is logged with the request id: what it records (a tracking hit) is not
 * worth holding the answer for.
 */
export type StreamingHandler = (event: ApiEvent, stream: Writable, context: ApiContext) => Promise<void>;

interface ResponseMetadata {
  statusCode: number;
  headers?: Record<string, string>;
}

/** The part of Lambda's `awslambda` global that streaming functions use. */
export interface StreamingRuntime {
  streamifyResponse(handler: StreamingHandler): StreamingHandler;
  HttpResponseStream: { from(stream: Writable, metadata: ResponseMetadata): Writable };
}

/** Between the JSON metadata and the body of a streamed proxy response: eight NUL bytes. */
export const metadataDelimiter = Buffer.alloc(8);

/**
 * Outside Lambda (the local host, tests): the same response format (metadata as JSON, the
 * delimiter, the body) on the stream the caller passes; `streamifyResponse` leaves the function as
 * it is, since the local gateway knows a streamed route from its declaration.
 */
const standIn: StreamingRuntime = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: {
    from(stream, metadata) {
      stream.write(Buffer.concat([Buffer.from(JSON.stringify(metadata)), metadataDelimiter]));
      return stream;
    },
  },
};

/** Lambda's runtime, else the stand-in (the AWS SDK leaves an `awslambda` object of its own anywhere). */
function runtime(): StreamingRuntime {
  const lambda = (globalThis as unknown as { awslambda?: Partial<StreamingRuntime> }).awslambda;
  return typeof lambda?.streamifyResponse === 'function' && lambda.HttpResponseStream !== undefined
    ? (lambda as StreamingRuntime)
    : standIn;
}

const pendingWork = Symbol('work after the response');

type WithPendingWork = ApiContext & { [pendingWork]?: Array<() => Promise<void>> };

/**
 * Runs `work` once the answer has left. Called outside a streamed function (a handler invoked
 * directly), the work runs at once, before the answer.
 */
export async function afterResponse(context: ApiContext, work: () => Promise<void>): Promise<void> {
  const queue = (context as WithPendingWork)[pendingWork];
  if (queue === undefined) await work();
  else queue.push(work);
}

/** The body of a proxy result as bytes. */
function bodyOf(result: ApiResult): Buffer {
  return result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
}

/** The response-streaming function of a route declared `afterResponse`, around its Middy chain. */
export function answerFirst(
  route: Route,
  handler: (event: ApiEvent, context: ApiContext) => Promise<ApiResult>,
): StreamingHandler {
  if (route.afterResponse !== true) throw new Error(`route ${route.id} is not declared afterResponse`);
  const lambda = runtime();
  return lambda.streamifyResponse(async (event, stream, context) => {
    const queue: Array<() => Promise<void>> = [];
    (context as WithPendingWork)[pendingWork] = queue;
    const result = await handler(event, context);
    const http = lambda.HttpResponseStream.from(stream, {
      statusCode: result.statusCode,
      headers: Object.fromEntries(
        Object.entries(result.headers ?? {}).map(([name, value]) => [name, String(value)]),
      ),
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.end(bodyOf(result), () => resolve());
    });
    // One turn of the event loop first: whatever carries the ended stream on (Lambda's runtime
    // client, the local gateway) sends the answer before the work's first synchronous stretch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const work of queue) {
      try {
        await work();
      } catch (error) {
        log('error', 'work after the response failed', {
          request_id: context.requestId ?? context.awsRequestId,
          route: context.routeKey,
          ...describeError(error),
        });
      }
    }
  });
}
