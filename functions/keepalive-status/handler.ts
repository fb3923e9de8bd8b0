import { dataResponse } from '#shared/platform/http/envelope.ts';
import { publicHandler } from '#shared/platform/http/public-handler.ts';
import { formatDate } from '#shared/platform/time/format.ts';
import { keepaliveStatus } from '#shared/service/routes.ts';

/** GET /keepalive-1.0: public and cheap, for uptime monitors. */
export const handler = publicHandler(keepaliveStatus, async () =>
  dataResponse({ status: 'alive', at: formatDate(new Date()) }),
);
