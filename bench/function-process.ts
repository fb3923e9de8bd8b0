import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { lambdaContext } from '../infra/local/lambda-context.ts';
import { peakRss } from './process-status.ts';

/**
 * One function's esbuild bundle alone in a Node process, as Lambda runs it, behind a minimal HTTP
 * front: any request becomes an API Gateway REST proxy event, except `POST /__invoke`, whose JSON
 * body is the event itself (SQS, schedules). `GET /__rss` answers the process's peak RSS (VmHWM, bytes).
 * Usage: node bench/function-process.ts <bundle index.mjs> <function id>
 */
const [bundle, functionId] = process.argv.slice(2) as [string, string];
const { handler } = (await import(pathToFileURL(bundle).href)) as {
  handler: (event: unknown, context: unknown) => Promise<unknown>;
};

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', async () => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/__rss') {
      response.end(String(peakRss()));
      return;
    }
    const requestId = randomUUID();
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      if (url.pathname === '/__invoke') {
        const result = await handler(JSON.parse(body), lambdaContext(functionId, requestId, 30_000, '128'));
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(result ?? null));
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers[name] = value;
      }
      const query = Object.fromEntries(url.searchParams);
      const hasQuery = Object.keys(query).length > 0;
      const result = (await handler(
        {
          resource: url.pathname,
          path: url.pathname,
          httpMethod: request.method,
          headers,
          multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
          queryStringParameters: hasQuery ? query : null,
          multiValueQueryStringParameters: hasQuery
            ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]]))
            : null,
          pathParameters: null,
          stageVariables: null,
          body: body.length > 0 ? body : null,
          isBase64Encoded: false,
          requestContext: {
            requestId,
            httpMethod: request.method,
            path: url.pathname,
            stage: 'bench',
            resourcePath: url.pathname,
            identity: { sourceIp: '127.0.0.1', userAgent: request.headers['user-agent'] ?? null },
          },
        },
        lambdaContext(functionId, requestId, 30_000, '128'),
      )) as { statusCode: number; headers?: Record<string, string>; body?: string };
      response.writeHead(result.statusCode, result.headers ?? {});
      response.end(result.body ?? '');
    } catch (error) {
      response.writeHead(500);
      response.end(error instanceof Error ? error.message : String(error));
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    `${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`,
  );
});
