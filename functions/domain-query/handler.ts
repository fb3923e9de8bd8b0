import { getDomainView, listDomainViews } from '#shared/domains/query.ts';
import { domainQuery } from '#shared/domains/routes.ts';
import { type DomainQueryRequest, domainQueryRequest } from '#shared/domains/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /domain/query-1.0: `{"domain"}` → one domain; otherwise a page of the account's domains. */
export const handler = protectedHandler<DomainQueryRequest>(
  domainQuery,
  { input: { schema: domainQueryRequest, from: 'body' } },
  async ({ input, caller }) =>
    dataResponse(
      input.domain === undefined
        ? await listDomainViews(caller.account, input)
        : { domain: await getDomainView(input.domain, caller.account) },
    ),
);
