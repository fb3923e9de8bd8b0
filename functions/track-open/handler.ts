import { publicHandler } from '#shared/platform/http/public-handler.ts';
import { recordOpen } from '#shared/tracking/hits.ts';
import { trackOpen } from '#shared/tracking/routes.ts';

/** A transparent 1×1 GIF. */
const pixel = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64').toString(
  'base64',
);

/**
 * GET /t/o/{token}: the open pixel (docs/tracking.md). Every token gets the image, so a mail client
 * shows nothing broken; only a token that opens records an open.
 */
export const handler = publicHandler(trackOpen, {}, async ({ event, sourceIp }) => {
  await recordOpen({
    token: event.pathParameters?.token ?? '',
    address: sourceIp,
    userAgent: event.headers['user-agent'] ?? '',
    at: new Date(),
  });
  return {
    statusCode: 200,
    headers: { 'content-type': 'image/gif', 'cache-control': 'no-store, private' },
    body: pixel,
    isBase64Encoded: true,
  };
});
