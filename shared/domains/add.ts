import { ensureAccount } from '../platform/auth/account-store.ts';
import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { domainSettings } from './config.ts';
import { keyPoolSize, pooledKeyPair } from './dkim/key-pool.ts';
import { newDomainKeys, openPrivateKey, sealedKey } from './dkim/key-store.ts';
import type { DkimAlgorithm } from './dkim/model/dkim.ts';
import { deleteDkimKeys } from './dkim/store/dkim-keys.ts';
import { type PoolKey, poolCandidate, returnPoolCandidate } from './dkim/store/key-pool.ts';
import { domainNameProblems } from './model/domain-name.ts';
import { nextCheckAfter } from './model/records.ts';
import { putClaim } from './store/claims.ts';
import { countDomainsOfAccount, type DomainRecord, deleteDomain, getDomain } from './store/domains.ts';
import { createApiDomain } from './store/new-domain.ts';
import { createSesIdentity, sesIdentitiesManaged } from './store/ses-identity.ts';
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
 *
 * A new domain costs two round trips to the table (docs/domains.md, "Add"): the reads (the name,
 * the account's count, a look at the key pool when this instance has no candidate left) side by
 * side, then one transaction that writes the domain, its key and the account and takes the pooled
 * key. The pooled key's ciphertext is stored as it is: nothing is decrypted or encrypted for it.
 */
export async function addDomain(
  input: AddDomainInput,
  account: string,
  now = new Date(),
): Promise<DomainView> {
  const domain = validDomainName(input.domain);
  const [existing, held, pooled] = await Promise.all([
    getDomain(domain),
    countDomainsOfAccount(account, domainSettings.maxDomainsPerAccount),
    keyPoolSize > 0 ? poolCandidate() : undefined,
  ]);
  const unused = () => {
    if (pooled !== undefined) returnPoolCandidate(pooled);
  };
  if (existing?.accountId === account) {
    unused();
    return domainView(existing);
  }
  if (existing !== undefined) {
    unused();
    return claimDomain(domain, account, now);
  }
  if (held >= domainSettings.maxDomainsPerAccount) {
    unused();
    const message = `An account holds at most ${domainSettings.maxDomainsPerAccount} domains; delete one first`;
    throw new ServiceError(Code.MethodValidation, message, { details: [{ field: 'domain', message }] });
  }
  const created = await createDomain(domain, account, input, now, pooled);
  return created ?? addDomain(input, account, now);
}

/** A claim of another account's domain: the claimant's own key, whose record is the proof. */
async function claimDomain(domain: string, account: string, now: Date): Promise<DomainView> {
  const [key] = await Promise.all([
    sealedKey(domain, 'rsa-sha256', now, pooledKeyPair),
    ensureAccount(account, now),
  ]);
  const claim = await putClaim({ domain, accountId: account, createdAt: now.toISOString(), key });
  log('info', 'domain claim', { domain, account });
  return claimView(claim);
}

/** How many pooled keys an add tries before it makes its own (other adds took the ones it saw). */
const poolTries = 3;

/**
 * Writes the new domain with its keys (one transaction), then, with SES, creates its identity;
 * undefined when another request created the domain first.
 */
async function createDomain(
  domain: string,
  account: string,
  input: AddDomainInput,
  now: Date,
  firstCandidate: PoolKey | undefined,
): Promise<DomainView | undefined> {
  const mailFrom = `${input.mail_from_subdomain ?? domainSettings.defaultMailFromSubdomain}.${domain}`;
  const algorithm: DkimAlgorithm = input.dkim_algorithm ?? 'rsa-sha256';
  let pooled = firstCandidate;
  for (let attempt = 1; ; attempt++) {
    if (pooled === undefined && keyPoolSize > 0 && attempt === 1)
      log('warn', 'dkim key pool empty; generating the key on the request', { domain });
    const keys = await newDomainKeys(domain, algorithm, now, pooled);
    const written = await createApiDomain({
      domain,
      accountId: account,
      mailFrom,
      receiving: input.receiving === true,
      now,
      nextCheckAt: new Date(now.getTime() + (nextCheckAfter('pending', 0) ?? 0)).toISOString(),
      keys: keys.companion === undefined ? [keys.key] : [keys.key, keys.companion],
      poolKeyId: pooled?.id,
    });
    if (written.outcome === 'exists') {
      if (pooled !== undefined) returnPoolCandidate(pooled);
      return undefined;
    }
    if (written.outcome === 'pool-key-taken') {
      pooled = attempt < poolTries ? await poolCandidate() : undefined;
      continue;
    }
    if (sesIdentitiesManaged()) await createIdentityOrUndo(written.record, keys.rsa, mailFrom);
    const stored = [keys.key, ...(keys.companion === undefined ? [] : [keys.companion])];
    return domainViewWithKeys(
      written.record,
      stored.map((key) => ({ ...key, status: 'active' as const })),
    );
  }
}

/**
 * The SES identity of a domain just written: BYODKIM with its RSA key and its MAIL FROM. Nothing
 * half-created: when SES refuses, the domain and its keys are removed again (createSesIdentity
 * removes an identity it made without its MAIL FROM).
 */
async function createIdentityOrUndo(
  record: DomainRecord,
  rsa: Parameters<typeof openPrivateKey>[0],
  mailFrom: string,
): Promise<void> {
  try {
    const privateKeyPem = await openPrivateKey(rsa);
    await createSesIdentity(record.domain, { selector: rsa.selector, privateKeyPem }, mailFrom);
  } catch (error) {
    log('warn', 'domain add failed; removing the domain', { domain: record.domain, ...describeError(error) });
    await deleteDomain(record.domain);
    await deleteDkimKeys(record.domain);
    throw error;
  }
}
