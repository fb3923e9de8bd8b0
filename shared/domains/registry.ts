import { ensureAccount } from '../platform/auth/account-store.ts';
import { ensureActiveDkimKey } from './dkim/key-store.ts';
import { deleteDkimKeys } from './dkim/store/dkim-keys.ts';
import {
  type DomainRecord,
  deleteDomain,
  getDomain,
  normaliseDomain,
  putDomain,
  setDomainReceiving,
} from './store/domains.ts';
import { mailFromOf } from './view.ts';

export type RegistrationResult = 'registered' | 'already-registered' | 'owned-by-another-account';

const domainPattern = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/;

export function isValidDomainName(domain: string): boolean {
  return domainPattern.test(normaliseDomain(domain));
}

/**
 * Registers a sending domain for an account (operators: admin command and SEED_DOMAINS) and gives
 * it an active rsa-sha256 DKIM key, so its mail is signed from the first message. Registering again
 * for the same account also creates the key if an earlier attempt stopped before it.
 */
export async function registerDomain(
  domain: string,
  accountId: string,
  now = new Date(),
): Promise<RegistrationResult> {
  const name = normaliseDomain(domain);
  if (!isValidDomainName(name)) throw new Error(`"${domain}" is not a domain name`);
  await ensureAccount(accountId, now);
  if (await putDomain(name, accountId, now)) {
    await ensureActiveDkimKey(name, now);
    return 'registered';
  }
  const existing = await getDomain(name);
  if (existing?.accountId !== accountId) return 'owned-by-another-account';
  await ensureActiveDkimKey(name, now);
  return 'already-registered';
}

/** Removes a domain and its DKIM keys (a later owner starts with fresh keys). */
export async function unregisterDomain(domain: string): Promise<boolean> {
  const removed = await deleteDomain(domain);
  await deleteDkimKeys(normaliseDomain(domain));
  return removed;
}

/**
 * Turns receiving on or off for a registered domain (docs/inbound.md); undefined when the domain
 * is not registered. On AWS the receipt rule takes mail for every domain SES verified; the inbound
 * function reads this switch for every message, so nothing is deployed.
 */
export function setReceiving(domain: string, receiving: boolean): Promise<DomainRecord | undefined> {
  return setDomainReceiving(domain, receiving);
}

/** Whether mail to this address is received here: its domain is registered and receives. */
export async function receivingDomain(address: string): Promise<boolean> {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  if (!isValidDomainName(domain)) return false;
  return (await getDomain(domain))?.receiving === true;
}

/**
 * The domain whose MAIL FROM domain (its return path, `bounce.<domain>` or the domain's own
 * `mail_from_subdomain`) is `host`, read from the table: mail to `<message uuid>@<host>` is feedback
 * about that domain's message. Undefined when no registered domain uses it.
 */
export async function returnPathOwner(host: string): Promise<DomainRecord | undefined> {
  const name = normaliseDomain(host);
  if (!isValidDomainName(name)) return undefined;
  const labels = name.split('.');
  // Each parent with at least two labels may be the domain; a few reads side by side.
  const parents = labels.slice(1, -1).map((_, index) => labels.slice(index + 1).join('.'));
  const found = await Promise.all(parents.map((parent) => getDomain(parent)));
  return found.find((record) => record !== undefined && mailFromOf(record) === name);
}

/** Parses `SEED_DOMAINS`: `domain=account,domain=account`. */
export function parseSeedDomains(value: string): Array<{ domain: string; account: string }> {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      const [domain = '', account = ''] = entry.split('=').map((part) => part.trim());
      if (domain === '' || account === '')
        throw new Error(`SEED_DOMAINS entry "${entry}" is not domain=account`);
      return { domain, account };
    });
}
