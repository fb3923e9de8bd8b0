import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { log } from '../platform/observability/log.ts';
import { deleteDkimKeys } from './dkim/store/dkim-keys.ts';
import { domainNotFound } from './errors.ts';
import { deleteClaims } from './store/claims.ts';
import { deleteDomain, getDomain, normaliseDomain } from './store/domains.ts';
import { deleteSesIdentity, sesIdentitiesManaged } from './store/ses-identity.ts';

/**
 * The account's mail from a domain that has not left yet (queued, scheduled, held), which the
 * messages wing owns; the delete function passes it in.
 */
export interface UnsentMail {
  list(account: string, domain: string): Promise<string[]>;
  cancel(account: string, uuids: readonly string[]): Promise<number>;
}

export interface DeleteDomainResult {
  domain: string;
  deleted: true;
  cancelled: number;
}

/** POST /domain/delete-1.0: removes the domain, its keys and claims; 111 while mail waits from it. */
export async function removeDomain(
  name: string,
  account: string,
  cancelUnsent: boolean,
  unsent: UnsentMail,
): Promise<DeleteDomainResult> {
  const domain = normaliseDomain(name);
  const record = await getDomain(domain);
  if (record === undefined || record.accountId !== account) throw domainNotFound();
  const waiting = await unsent.list(account, domain);
  let cancelled = 0;
  if (waiting.length > 0) {
    if (!cancelUnsent) {
      const message = `${waiting.length} message(s) from ${domain} are not sent yet (queued, scheduled or held); send or cancel them first, or delete with "cancel_unsent": true`;
      throw new ServiceError(Code.MethodValidation, message, { details: [{ field: 'domain', message }] });
    }
    cancelled = await unsent.cancel(account, waiting);
  }
  if (record.origin === 'api' && sesIdentitiesManaged()) await deleteSesIdentity(domain);
  await deleteDomain(domain);
  await deleteDkimKeys(domain);
  await deleteClaims(domain);
  log('info', 'domain deleted', { domain, account, cancelled });
  return { domain, deleted: true, cancelled };
}
