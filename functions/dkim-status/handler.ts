import { getDkimStatus } from '#shared/domains/dkim/dkim.ts';
import { type DkimStatusRequest, dkimStatusRequest } from '#shared/domains/dkim/schemas.ts';
import { dkimStatus } from '#shared/domains/routes.ts';
import { requireDomainAllowed } from '#shared/platform/auth/domain-restriction.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** GET /domain/dkim/status-1.0?domain=…: the domain's DKIM configuration, keys and DNS status. */
export const handler = protectedHandler<DkimStatusRequest>(
  dkimStatus,
  { input: { schema: dkimStatusRequest, from: 'query' } },
  async ({ input, caller }) => {
    requireDomainAllowed(caller, input.domain);
    return dataResponse(await getDkimStatus(input.domain, caller.account));
  },
);
