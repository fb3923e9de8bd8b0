import { setDkimAlgorithm } from '#shared/domains/dkim/dkim.ts';
import { type DkimSetAlgorithmRequest, dkimSetAlgorithmRequest } from '#shared/domains/dkim/schemas.ts';
import { dkimSetAlgorithm } from '#shared/domains/routes.ts';
import { requireDomainAllowed } from '#shared/platform/auth/domain-restriction.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/**
 * POST /domain/dkim/set-algorithm-1.0 {"domain","algorithm"}: rotates the domain to a new key of
 * the algorithm; the previous key stays listed as retired. Supports ?dry_run=true.
 */
export const handler = protectedHandler<DkimSetAlgorithmRequest>(
  dkimSetAlgorithm,
  { input: { schema: dkimSetAlgorithmRequest, from: 'body' } },
  async ({ input, caller, dryRun }) => {
    requireDomainAllowed(caller, input.domain);
    return dataResponse(await setDkimAlgorithm(input.domain, caller.account, input.algorithm, dryRun));
  },
);
