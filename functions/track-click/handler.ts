import { afterResponse, answerFirst } from '#shared/platform/http/after-response.ts';
import type { ApiResult } from '#shared/platform/http/api-types.ts';
import { publicHandler } from '#shared/platform/http/public-handler.ts';
import { clickTarget, recordClick } from '#shared/tracking/hits.ts';
import { trackClick } from '#shared/tracking/routes.ts';

const notFoundPage =
  '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Link not found</title></head><body><p>This link is not valid.</p></body></html>';

/**
 * GET /t/c/{token}: 302 to the link the stored message holds at the token's index (docs/tracking.md);
 * never to anything the request names. A token that does not open, or names no stored link, gets a
 * neutral 404 page and records nothing. The click is recorded after the answer.
 */
export const handler = answerFirst(
  trackClick,
  publicHandler(trackClick, async ({ event, sourceIp, context }): Promise<ApiResult> => {
    const visit = {
      token: event.pathParameters?.token ?? '',
      address: sourceIp,
      userAgent: event.headers['user-agent'] ?? '',
      at: new Date(),
    };
    const click = await clickTarget(visit.token, visit.at);
    if (click === undefined) {
      return {
        statusCode: 404,
        headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
        body: notFoundPage,
      };
    }
    await afterResponse(context, async () => {
      await recordClick(visit, click);
    });
    return {
      statusCode: 302,
      headers: {
        location: click.url,
        'cache-control': 'no-store, private',
        'referrer-policy': 'no-referrer',
      },
      body: '',
    };
  }),
);
