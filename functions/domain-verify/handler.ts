import { domainVerify } from '#shared/domains/routes.ts';
import { type DomainVerifyRequest, domainVerifyRequest } from '#shared/domains/schemas.ts';
import { verifyDomain } from '#shared/domains/verify.ts';
import { domainMovedDetail, endUnsent, listUnsentFrom } from '#shared/messages/index.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/**
 * POST /domain/verify-1.0: checks the records now. A claim whose proof verifies moves the domain,
 * and the previous holder's unsent mail from it ends failed.
 */
export const handler = protectedHandler<DomainVerifyRequest>(
  domainVerify,
  { input: { schema: domainVerifyRequest, from: 'body' } },
  async ({ input, caller }) =>
    dataResponse({
      domain: await verifyDomain(input.domain, caller.account, {
        onMoved: async ({ domain, from }) => {
          await endUnsent(from, await listUnsentFrom(from, domain), 'failed', domainMovedDetail);
        },
      }),
    }),
);
