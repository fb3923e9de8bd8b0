import { describeError, log } from '../platform/observability/log.ts';
import { domainSettings } from './config.ts';
import { openPrivateKey } from './dkim/key-store.ts';
import { getDkimKey } from './dkim/store/dkim-keys.ts';
import { sesSwitchDone } from './store/claims.ts';
import type { DomainRecord } from './store/domains.ts';
import { createSesIdentity, switchSesIdentity } from './store/ses-identity.ts';

/**
 * After a claim moved a domain (docs/domains.md, "Claims"), its SES identity (one per domain and
 * region) must sign with the new holder's key and use the new holder's MAIL FROM. The table moves
 * first, so the previous holder's mail stops at once; the identity follows here, and until SES took
 * the key the domain is marked and cannot become sending-ready. Every check of the domain retries a
 * switch that failed. True when the identity has the domain's active key.
 */
export async function finishSesSwitch(record: DomainRecord): Promise<boolean> {
  const selector = record.activeSelector;
  const key = selector === undefined ? undefined : await getDkimKey(record.domain, selector);
  if (selector === undefined || key === undefined || key.algorithm !== 'rsa-sha256') {
    log('warn', 'ses identity switch without an active rsa key', { domain: record.domain, selector });
    return false;
  }
  const rsa = { selector, privateKeyPem: await openPrivateKey(key) };
  const mailFrom = record.mailFrom ?? `${domainSettings.defaultMailFromSubdomain}.${record.domain}`;
  try {
    try {
      await switchSesIdentity(record.domain, rsa, mailFrom);
    } catch (error) {
      // The previous holder's identity was made by hand (an operator's domain): make it now.
      if ((error as { name?: string }).name !== 'NotFoundException') throw error;
      await createSesIdentity(record.domain, rsa, mailFrom);
    }
  } catch (error) {
    log('warn', 'ses identity switch failed; retried at the next check', {
      domain: record.domain,
      ...describeError(error),
    });
    return false;
  }
  await sesSwitchDone(record.domain, selector);
  log('info', 'ses identity switched to the new holder', { domain: record.domain, selector });
  return true;
}
