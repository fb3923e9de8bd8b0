import { addKey } from '#shared/apikeys/add.ts';
import { apikeyAdd } from '#shared/apikeys/routes.ts';
import { type ApikeyAddRequest, apikeyAddRequest } from '#shared/apikeys/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /apikey/add-1.0: makes an API key for the caller's account; its secret is answered once. */
export const handler = protectedHandler<ApikeyAddRequest>(
  apikeyAdd,
  { input: { schema: apikeyAddRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await addKey(caller, input)),
);
