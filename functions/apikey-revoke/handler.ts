import { revokeKey } from '#shared/apikeys/manage.ts';
import { apikeyRevoke } from '#shared/apikeys/routes.ts';
import { type ApikeyRevokeRequest, apikeyRevokeRequest } from '#shared/apikeys/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /apikey/revoke-1.0: revokes a key of the caller's account (refused everywhere within 30 s). */
export const handler = protectedHandler<ApikeyRevokeRequest>(
  apikeyRevoke,
  { input: { schema: apikeyRevokeRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse({ api_key: await revokeKey(caller.account, input.key_id) }),
);
