import { domainUpdate } from '#shared/domains/routes.ts';
import { type DomainUpdateRequest, domainUpdateRequest } from '#shared/domains/schemas.ts';
import { updateDomain } from '#shared/domains/update.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /domain/update-1.0: receiving and tracking switches. */
export const handler = protectedHandler<DomainUpdateRequest>(
  domainUpdate,
  { input: { schema: domainUpdateRequest, from: 'body' } },
  async ({ input, caller }) => {
    const settings = {
      ...(input.receiving === undefined ? {} : { receiving: input.receiving }),
      ...(input.tracking === undefined ? {} : { tracking: input.tracking }),
    };
    return dataResponse({ domain: await updateDomain(input.domain, caller.account, settings) });
  },
);
