import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { suppressionQuery } from '#shared/suppressions/routes.ts';
import { type SuppressionQueryRequest, suppressionQueryRequest } from '#shared/suppressions/schemas.ts';
import { listSuppressions, lookupSuppression } from '#shared/suppressions/suppressions.ts';

/** POST /suppression/query-1.0: one address of the caller's suppression list, or a page of it. */
export const handler = protectedHandler<SuppressionQueryRequest>(
  suppressionQuery,
  { input: { schema: suppressionQueryRequest, from: 'body' } },
  async ({ input, caller }) =>
    input.email !== undefined
      ? dataResponse({ suppression: await lookupSuppression(caller.account, input.email) })
      : dataResponse(await listSuppressions(caller.account, input.filters ?? {}, input.cursor)),
);
