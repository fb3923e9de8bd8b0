import { createHash } from 'node:crypto';
import { publicHandler } from '#shared/platform/http/public-handler.ts';
import { openapi } from '#shared/service/routes.ts';
import document from '../../docs/openapi.json' with { type: 'json' };

/**
 * GET /openapi.json: the committed document (`npm run openapi` regenerates it from the route table
 * and the schemas), bundled into the function. Public and cacheable, with an ETag.
 */
const body = JSON.stringify(document);
const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

export const handler = publicHandler(openapi, async ({ event }) => {
  const headers = { etag, 'cache-control': 'public, max-age=300' };
  if (event.headers['if-none-match'] === etag) return { statusCode: 304, headers, body: '' };
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body,
  };
});
