import { listKeys, queryKey } from '#shared/apikeys/manage.ts';
import { apikeyQuery } from '#shared/apikeys/routes.ts';
import { type ApikeyQueryRequest, apikeyQueryRequest } from '#shared/apikeys/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /apikey/query-1.0: one key of the caller's account by key_id, or all of them. */
export const handler = protectedHandler<ApikeyQueryRequest>(
  apikeyQuery,
  { input: { schema: apikeyQueryRequest, from: 'body' } },
  async ({ input, caller }) => {
    if (input.key_id !== undefined)
      return dataResponse({ api_key: await queryKey(caller.account, input.key_id) });
    const keys = await listKeys(caller.account);
    return dataResponse({ api_keys: keys, count: keys.length });
  },
);
