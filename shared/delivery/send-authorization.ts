import { isAccountActive } from '../platform/auth/account-status.ts';
import { cachedDomain } from './cached-domain.ts';

/**
 * Authorization at send time (docs/delivery.md, "Authorization at send time"). The account's status
 * and the sending domain's owner were checked when the message was accepted; a scheduled or held
 * message may leave days later, so the sender checks both again before it composes anything:
 * - the account is active (the same 30-second cache as the API's authentication);
 * - the sending domain is still registered to the message's account (cached 30 seconds per
 *   function instance: a few reads a minute per domain, whatever the volume).
 * A message that fails either ends `failed` with the reason, and nothing is sent. The signing step
 * checks the owner once more on its own fresh read of the domain (shared/domains/dkim/signing-keys.ts),
 * so a domain that moves between this check and the signature is never signed with the new owner's key.
 */
export class SendRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SendRefused';
  }
}

/** Throws `SendRefused` when the message may no longer be sent. */
export async function authorizeSend(
  message: { account_id: string; tenant: string },
  nowMs: number = Date.now(),
): Promise<void> {
  if (!(await isAccountActive(message.account_id, nowMs))) {
    throw new SendRefused('Not sent: the account was disabled after the message was accepted');
  }
  const owner = (await cachedDomain(message.tenant, nowMs))?.accountId;
  if (owner === undefined) {
    throw new SendRefused(
      `Not sent: the sending domain ${message.tenant} was removed from the platform after the message was accepted`,
    );
  }
  if (owner !== message.account_id) {
    throw new SendRefused(`Not sent: the sending domain ${message.tenant} no longer belongs to this account`);
  }
}
