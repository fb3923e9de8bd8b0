import { removeDomain } from '#shared/domains/delete.ts';
import { domainDelete } from '#shared/domains/routes.ts';
import { type DomainDeleteRequest, domainDeleteRequest } from '#shared/domains/schemas.ts';
import { endUnsent, listUnsentFrom } from '#shared/messages/index.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /domain/delete-1.0: removes the domain; 111 while mail from it is unsent, unless cancel_unsent. */
export const handler = protectedHandler<DomainDeleteRequest>(
  domainDelete,
  { input: { schema: domainDeleteRequest, from: 'body' } },
  async ({ input, caller }) =>
    dataResponse(
      await removeDomain(input.domain, caller.account, input.cancel_unsent === true, {
        list: listUnsentFrom,
        cancel: (account, uuids) => endUnsent(account, uuids, 'cancelled', 'domain deleted'),
      }),
    ),
);
