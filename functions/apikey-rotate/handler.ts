import { rotateKey } from '#shared/apikeys/manage.ts';
import { apikeyRotate } from '#shared/apikeys/routes.ts';
import { type ApikeyRotateRequest, apikeyRotateRequest } from '#shared/apikeys/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /apikey/rotate-1.0: a new secret for a key; the old one works for grace_seconds. */
export const handler = protectedHandler<ApikeyRotateRequest>(
  apikeyRotate,
  { input: { schema: apikeyRotateRequest, from: 'body' } },
  async ({ input, caller }) =>
    dataResponse(await rotateKey(caller.account, input.key_id, input.grace_seconds ?? 0)),
);
