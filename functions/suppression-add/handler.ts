import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { suppressionAdd } from '#shared/suppressions/routes.ts';
import { type SuppressionAddRequest, suppressionAddRequest } from '#shared/suppressions/schemas.ts';
import { addManualSuppressions } from '#shared/suppressions/suppressions.ts';

/** POST /suppression/add-1.0: suppresses addresses for the caller's account (reason manual). */
export const handler = protectedHandler<SuppressionAddRequest>(
  suppressionAdd,
  { input: { schema: suppressionAddRequest, from: 'body' } },
  async ({ input, caller, dryRun }) =>
    dataResponse(await addManualSuppressions(caller.account, input.emails, dryRun)),
);
