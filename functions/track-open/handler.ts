import { afterResponse, answerFirst } from '#shared/platform/http/after-response.ts';
import { publicHandler } from '#shared/platform/http/public-handler.ts';
import { recordOpen } from '#shared/tracking/hits.ts';
import { trackOpen } from '#shared/tracking/routes.ts';

/** A transparent 1×1 GIF. */
const pixel = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64').toString(
  'base64',
);

/**
 * GET /t/o/{token}: the open pixel (docs/tracking.md). Every token gets the image at once, so a mail
 * client shows nothing broken and waits on no read; after the answer, only a token that opens
 * records an open.
 */
export const handler = answerFirst(
  trackOpen,
  publicHandler(trackOpen, async ({ event, sourceIp, context }) => {
    const visit = {
      token: event.pathParameters?.token ?? '',
      address: sourceIp,
      userAgent: event.headers['user-agent'] ?? '',
      at: new Date(),
    };
    await afterResponse(context, async () => {
      await recordOpen(visit);
    });
    return {
      statusCode: 200,
      headers: { 'content-type': 'image/gif', 'cache-control': 'no-store, private' },
      body: pixel,
      isBase64Encoded: true,
    };
  }),
);
