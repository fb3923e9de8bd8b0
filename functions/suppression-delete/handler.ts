import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { suppressionDelete } from '#shared/suppressions/routes.ts';
import { type SuppressionDeleteRequest, suppressionDeleteRequest } from '#shared/suppressions/schemas.ts';
import { removeSuppressions } from '#shared/suppressions/suppressions.ts';

/** POST /suppression/delete-1.0: removes addresses from the caller's suppression list. */
export const handler = protectedHandler<SuppressionDeleteRequest>(
  suppressionDelete,
  { input: { schema: suppressionDeleteRequest, from: 'body' } },
  async ({ input, caller, dryRun }) =>
    dataResponse(await removeSuppressions(caller.account, input.emails, dryRun)),
);
