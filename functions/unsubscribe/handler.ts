import { unsubscribeOneClick } from '#shared/delivery/routes.ts';
import { isOneClickBody } from '#shared/delivery/unsubscribe/one-click-body.ts';
import { unsubscribe } from '#shared/delivery/unsubscribe/unsubscribe.ts';
import { Code } from '#shared/platform/errors/catalogue.ts';
import { ServiceError } from '#shared/platform/errors/service-error.ts';
import { publicHandler } from '#shared/platform/http/public-handler.ts';

/**
 * POST /unsubscribe/{token}: the one-click unsubscribe of RFC 8058, as Gmail and Yahoo send it (no
 * cookie, no credential, body `List-Unsubscribe=One-Click`). 200 with an empty body, never a
 * redirect; the same again changes nothing more (docs/streams.md).
 */
export const handler = publicHandler(unsubscribeOneClick, async ({ event }) => {
  const body =
    event.isBase64Encoded && event.body !== null
      ? Buffer.from(event.body, 'base64').toString('utf8')
      : event.body;
  if (!isOneClickBody(body, event.headers?.['content-type'])) {
    throw new ServiceError(Code.InvalidInput, undefined, {
      details: [
        {
          field: '(body)',
          message: 'The one-click request is the form field List-Unsubscribe=One-Click (RFC 8058)',
        },
      ],
    });
  }
  await unsubscribe(event.pathParameters?.token);
  return { statusCode: 200, headers: { 'cache-control': 'no-store' }, body: '' };
});
