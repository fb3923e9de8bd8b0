import { ensureAccount } from '../platform/auth/account-store.ts';
import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { domainSettings } from './config.ts';
import { pooledKeyPair } from './dkim/key-pool.ts';
import { createActiveDkimKey, sealedKey } from './dkim/key-store.ts';
import type { DkimAlgorithm } from './dkim/model/dkim.ts';
import { deleteDkimKeys } from './dkim/store/dkim-keys.ts';
import { domainNameProblems } from './model/domain-name.ts';
import { nextCheckAfter } from './model/records.ts';
import { putClaim } from './store/claims.ts';
import { putApiDomain } from './store/domain-checks.ts';
import { deleteDomain, getDomain, listDomainsOfAccount } from './store/domains.ts';
import { createSesIdentity, deleteSesIdentity, sesIdentitiesManaged } from './store/ses-identity.ts';
import { claimView, type DomainView, domainView, domainViewWithKeys } from './view.ts';

export interface AddDomainInput {
  domain: string;
  mail_from_subdomain?: string;
  dkim_algorithm?: DkimAlgorithm;
  receiving?: boolean;
}

/** Checks the name; 107 with the reason otherwise. The name as stored. */
export function validDomainName(input: string): string {
  const problems = domainNameProblems(input);
  if (problems.length > 0) throw new ServiceError(Code.InvalidInput, undefined, { details: problems });
  return input.trim().toLowerCase();
}

/**
 * POST /domain/add-1.0: a new domain of the account, pending until its records verify; a domain
 * the account holds already answers its view; one another account holds is a claim.
 */
export async function addDomain(
  input: AddDomainInput,
  account: string,
  now = new Date(),
): Promise<DomainView> {
  const domain = validDomainName(input.domain);
  // Independent reads (and the idempotent account write) in one round trip.
  const [existing, held] = await Promise.all([
    getDomain(domain),
    listDomainsOfAccount(account),
    ensureAccount(account, now),
  ]);
  if (existing?.accountId === account) return domainView(existing);
  if (existing !== undefined) {
    const key = await sealedKey(domain, 'rsa-sha256', now, pooledKeyPair);
    const claim = await putClaim({ domain, accountId: account, createdAt: now.toISOString(), key });
    log('info', 'domain claim', { domain, account });
    return claimView(claim);
  }
  if (held.length >= domainSettings.maxDomainsPerAccount) {
    const message = `An account holds at most ${domainSettings.maxDomainsPerAccount} domains; delete one first`;
    throw new ServiceError(Code.MethodValidation, message, { details: [{ field: 'domain', message }] });
  }
  const subdomain = input.mail_from_subdomain ?? domainSettings.defaultMailFromSubdomain;
  // The RSA key (the key itself, or an Ed25519 key's companion) is taken from the pool while the
  // domain item is written.
  const rsaPair = pooledKeyPair('rsa-sha256');
  rsaPair.catch(() => undefined);
  const newKeyPair = (algorithm: DkimAlgorithm) =>
    algorithm === 'rsa-sha256' ? rsaPair : pooledKeyPair(algorithm);
  const created = await putApiDomain({
    domain,
    accountId: account,
    mailFrom: `${subdomain}.${domain}`,
    receiving: input.receiving === true,
    now,
    nextCheckAt: new Date(now.getTime() + (nextCheckAfter('pending', 0) ?? 0)).toISOString(),
  });
  // Another request created it first: answer as for an existing domain.
  if (created === undefined) return addDomain(input, account, now);
  let identityCreated = false;
  const withSes = sesIdentitiesManaged();
  let key: Awaited<ReturnType<typeof createActiveDkimKey>>;
  try {
    key = await createActiveDkimKey(
      domain,
      account,
      input.dkim_algorithm ?? 'rsa-sha256',
      undefined,
      now,
      withSes
        ? async (rsa) => {
            await createSesIdentity(domain, rsa, `${subdomain}.${domain}`);
            identityCreated = true;
          }
        : undefined,
      // RSA keys come from the pool made ahead (docs/domains.md, "Key pool").
      newKeyPair,
    );
  } catch (error) {
    // Nothing half-created: a domain without its key or SES identity is removed again, and an
    // identity without its domain.
    log('warn', 'domain add failed; removing the domain', { domain, ...describeError(error) });
    if (identityCreated) await deleteSesIdentity(domain);
    await deleteDomain(domain);
    await deleteDkimKeys(domain);
    throw error;
  }
  return domainViewWithKeys({ ...created, activeSelector: key.selector }, key.stored);
}
