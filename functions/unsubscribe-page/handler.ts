import { unsubscribePage } from '#shared/delivery/routes.ts';
import { unsubscribePage as page, unsubscribePageHeaders } from '#shared/delivery/unsubscribe/page.ts';
import { claimOf } from '#shared/delivery/unsubscribe/unsubscribe.ts';
import { publicHandler } from '#shared/platform/http/public-handler.ts';

/**
 * GET /unsubscribe/{token}: the page with the button that makes the one-click POST. It checks the
 * token (112 for a bad one) and changes nothing, so link scanners unsubscribe nobody.
 */
export const handler = publicHandler(unsubscribePage, async ({ event }) => {
  await claimOf(event.pathParameters?.token);
  return { statusCode: 200, headers: unsubscribePageHeaders, body: page };
});
