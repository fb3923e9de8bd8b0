import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { afterResponse, answerFirst, metadataDelimiter } from '../../shared/platform/http/after-response.ts';
import type { ApiContext, ApiEvent } from '../../shared/platform/http/api-types.ts';
import { route } from '../../shared/platform/http/route.ts';

const streamed = route('streamed-test', 'GET /streamed', [], { public: true, afterResponse: true });

function collector() {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { stream, bytes: () => Buffer.concat(chunks) };
}

const context = () => ({ requestId: 'req-1', routeKey: 'GET /streamed' }) as ApiContext;

describe('answer first, then the work (after-response.ts)', () => {
  const logFile = join(tmpdir(), `after-response-${process.pid}.log`);
  beforeEach(() => {
    process.env.LOG_FILE = logFile;
  });
  afterEach(() => {
    delete process.env.LOG_FILE;
    rmSync(logFile, { force: true });
  });

  it('writes the whole response and ends the stream before the work runs', async () => {
    const { stream, bytes } = collector();
    let seenByWork: { finished: boolean; bytes: string } | undefined;
    const handler = answerFirst(streamed, async (_event, ctx) => {
      await afterResponse(ctx, async () => {
        seenByWork = { finished: stream.writableFinished, bytes: bytes().toString('latin1') };
      });
      return { statusCode: 302, headers: { location: 'https://a.example/' }, body: '' };
    });
    await handler({} as ApiEvent, stream, context());
    expect(seenByWork?.finished).toBe(true);
    const at = bytes().indexOf(metadataDelimiter);
    expect(JSON.parse(bytes().subarray(0, at).toString('utf8'))).toEqual({
      statusCode: 302,
      headers: { location: 'https://a.example/' },
    });
    expect(seenByWork?.bytes).toBe(bytes().toString('latin1'));
  });

  it('sends a base64 body as its bytes', async () => {
    const { stream, bytes } = collector();
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    const handler = answerFirst(streamed, async () => ({
      statusCode: 200,
      headers: { 'content-type': 'image/gif' },
      body: gif.toString('base64'),
      isBase64Encoded: true,
    }));
    await handler({} as ApiEvent, stream, context());
    const at = bytes().indexOf(metadataDelimiter);
    expect(bytes().subarray(at + metadataDelimiter.length)).toEqual(gif);
  });

  it('logs failed work with the request id instead of failing the answered request', async () => {
    const { stream } = collector();
    const handler = answerFirst(streamed, async (_event, ctx) => {
      await afterResponse(ctx, async () => {
        throw new Error('table unavailable');
      });
      return { statusCode: 200, body: 'ok' };
    });
    await expect(handler({} as ApiEvent, stream, context())).resolves.toBeUndefined();
    const line = readFileSync(logFile, 'utf8');
    expect(line).toMatch(/work after the response failed/);
    expect(line).toMatch(/req-1/);
    expect(line).toMatch(/table unavailable/);
  });

  it('outside a streamed function the work runs before the answer', async () => {
    const order: string[] = [];
    await afterResponse(context(), async () => {
      order.push('work');
    });
    order.push('answer');
    expect(order).toEqual(['work', 'answer']);
  });

  it('refuses a route not declared afterResponse', () => {
    const plain = route('plain-test', 'GET /plain', [], { public: true });
    expect(() => answerFirst(plain, async () => ({ statusCode: 200, body: '' }))).toThrow(/afterResponse/);
  });
});
