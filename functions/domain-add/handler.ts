import { addDomain } from '#shared/domains/add.ts';
import { domainAdd } from '#shared/domains/routes.ts';
import { type DomainAddRequest, domainAddRequest } from '#shared/domains/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /domain/add-1.0: a new domain with its records to publish, or a claim. */
export const handler = protectedHandler<DomainAddRequest>(
  domainAdd,
  { input: { schema: domainAddRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse({ domain: await addDomain(input, caller.account) }),
);
