import type { Lookup } from '../platform/dns/record-lookup.ts';
import { lookupRecords } from '../platform/dns/record-lookup.ts';
import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { log } from '../platform/observability/log.ts';
import { checkClaim, checkDomain } from './check.ts';
import { domainSettings } from './config.ts';
import { domainNotFound } from './errors.ts';
import { nextCheckAfter } from './model/records.ts';
import { completeClaim, type DomainClaim, getClaim } from './store/claims.ts';
import { dueEntry, takeVerifySlot } from './store/domain-checks.ts';
import { type DomainRecord, getDomain, normaliseDomain } from './store/domains.ts';
import { sesIdentitiesManaged } from './store/ses-identity.ts';
import { claimView, type DomainView, domainView } from './view.ts';

/** What a claim that moved a domain tells the rest of the service (webhook event, unsent mail). */
export interface DomainMoved {
  domain: string;
  from: string;
  to: string;
}

export interface VerifyOptions {
  now?: Date;
  lookup?: Lookup;
  /** Called once a claim moved the domain (the previous holder's unsent mail ends failed). */
  onMoved?: (moved: DomainMoved) => Promise<void>;
}

const tooSoon = (seconds: number) =>
  new ServiceError(Code.TooManyRequests, 'This domain was checked a moment ago', {
    details: [
      {
        field: 'domain',
        message: `A domain is checked on request at most once per 10 seconds; try again in ${seconds} s`,
      },
    ],
    headers: { 'retry-after': String(seconds) },
  });

/**
 * Moves a claimed domain once its proof verifies: the claimant's key becomes the domain's, the
 * domain is checked again as the claimant's, and `onMoved` hears of it.
 */
export async function settleClaim(
  claim: DomainClaim,
  holder: DomainRecord,
  options: VerifyOptions,
): Promise<DomainRecord | undefined> {
  const now = options.now ?? new Date();
  const lookup = options.lookup ?? lookupRecords;
  const { proven } = await checkClaim(claim, now, lookup);
  if (!proven) return undefined;
  const next = new Date(now.getTime() + (nextCheckAfter('pending', 0) ?? 0)).toISOString();
  const mailFrom = `${domainSettings.defaultMailFromSubdomain}.${claim.domain}`;
  const moved = await completeClaim(
    claim,
    holder.accountId,
    mailFrom,
    now,
    next,
    dueEntry(claim.domain, next),
    sesIdentitiesManaged(),
  );
  if (!moved) return undefined;
  log('info', 'domain moved by claim', { domain: claim.domain, from: holder.accountId, to: claim.accountId });
  await options.onMoved?.({ domain: claim.domain, from: holder.accountId, to: claim.accountId });
  // The check gives the SES identity the claimant's key (and retries it later if SES fails).
  const record = await getDomain(claim.domain);
  return record === undefined ? undefined : checkDomain(record, now, lookup);
}

/** POST /domain/verify-1.0: checks the domain's records (or a claim's proof) now. */
export async function verifyDomain(
  name: string,
  account: string,
  options: VerifyOptions = {},
): Promise<DomainView> {
  const now = options.now ?? new Date();
  const domain = normaliseDomain(name);
  const record = await getDomain(domain);
  if (record === undefined) throw domainNotFound();
  if (record.accountId !== account) {
    const claim = await getClaim(domain, account);
    if (claim === undefined) throw domainNotFound();
    const since =
      claim.check?.checked_at === undefined
        ? Number.POSITIVE_INFINITY
        : now.getTime() - Date.parse(claim.check.checked_at);
    if (since < domainSettings.verifyGapMs)
      throw tooSoon(Math.ceil((domainSettings.verifyGapMs - since) / 1000));
    const moved = await settleClaim(claim, record, options);
    if (moved !== undefined) return domainView(moved);
    const after = await getClaim(domain, account);
    if (after === undefined) throw domainNotFound();
    return claimView(after);
  }
  const slot = await takeVerifySlot(domain, account, now, domainSettings.verifyGapMs);
  if (!slot.ok) throw tooSoon(slot.retryAfterSeconds);
  const checked = await checkDomain(record, now, options.lookup);
  if (checked === undefined) throw domainNotFound();
  return domainView(checked);
}
