import { dataResponse } from '#shared/platform/http/envelope.ts';
import { publicHandler } from '#shared/platform/http/public-handler.ts';
import { health } from '#shared/service/routes.ts';

/** GET /health: public; `caller_ip` is the gateway's view of the TCP peer, never a forwarded header. */
export const handler = publicHandler(health, async ({ sourceIp }) =>
  dataResponse({ status: 'ok', caller_ip: sourceIp }),
);
