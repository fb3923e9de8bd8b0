import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type DkimStatusRequest, dkimStatusRequest } from '#shared/schemas/dkim.ts';
import { getDkimStatus } from '#shared/services/dkim.ts';

/** GET /domain/dkim/status-1.0?domain=…: the domain's DKIM configuration, keys and DNS status. */
export const handler = protectedHandler<DkimStatusRequest>(
  'dkim-status',
  { input: { schema: dkimStatusRequest, from: 'query' } },
  async ({ input, caller }) => dataResponse(await getDkimStatus(input.domain, caller.account)),
);
