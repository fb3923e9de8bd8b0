import { whoami as whoamiRoute } from '#shared/apikeys/routes.ts';
import { whoami } from '#shared/apikeys/whoami.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** GET /whoami-1.0: what the presented credential is, and the domains it may send from. */
export const handler = protectedHandler(whoamiRoute, {}, async ({ caller }) =>
  dataResponse(await whoami(caller)),
);
