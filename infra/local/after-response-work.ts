import { Writable } from 'node:stream';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { metadataDelimiter } from '../../shared/platform/http/after-response.ts';

/**
 * The local side of routes declared `afterResponse` (shared/platform/http/after-response.ts): the
 * gateway reads the streamed response as API Gateway does (JSON metadata, eight NUL bytes, the
 * body) and answers when the stream ends, while the function goes on with its work. That work is
 * kept track of here, so the host's shutdown and the tests (`GET /_local/settled`) wait for it.
 */
const pending = new Set<Promise<unknown>>();

/** Keeps track of a function's invocation until it returns (failures are the caller's to report). */
export function trackInvocation(invocation: Promise<unknown>): void {
  const tracked = invocation.catch(() => undefined).finally(() => pending.delete(tracked));
  pending.add(tracked);
}

/** Resolves when no function is still at work after its answer (work started meanwhile included). */
export async function settled(): Promise<void> {
  while (pending.size > 0) await Promise.all([...pending]);
}

/** A stream for a streaming function, and its response once the function ends it. */
export function responseCollector(): { stream: Writable; response: Promise<APIGatewayProxyResult> } {
  const chunks: Buffer[] = [];
  let resolveResponse: (result: APIGatewayProxyResult) => void = () => undefined;
  let rejectResponse: (error: Error) => void = () => undefined;
  const response = new Promise<APIGatewayProxyResult>((resolve, reject) => {
    resolveResponse = resolve;
    rejectResponse = reject;
  });
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      done();
    },
    final(done) {
      try {
        resolveResponse(parseStreamedResponse(Buffer.concat(chunks)));
      } catch (error) {
        rejectResponse(error as Error);
      }
      done();
    },
  });
  return { stream, response };
}

function parseStreamedResponse(bytes: Buffer): APIGatewayProxyResult {
  const at = bytes.indexOf(metadataDelimiter);
  if (at < 0) throw new Error('a streamed response without its metadata and delimiter');
  const metadata = JSON.parse(bytes.subarray(0, at).toString('utf8')) as {
    statusCode: number;
    headers?: Record<string, string>;
  };
  return {
    statusCode: metadata.statusCode,
    headers: metadata.headers ?? {},
    body: bytes.subarray(at + metadataDelimiter.length).toString('base64'),
    isBase64Encoded: true,
  };
}
