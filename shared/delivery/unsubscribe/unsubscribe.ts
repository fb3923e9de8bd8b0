import { recipientEntry } from '../../messages/index.ts';
import { Code } from '../../platform/errors/catalogue.ts';
import { ServiceError } from '../../platform/errors/service-error.ts';
import { openLinkToken } from '../../platform/tokens/link-tokens.ts';
import { suppressUnsubscribed } from '../../suppressions/index.ts';
import { updateWithRetry } from '../store/message-delivery.ts';
import { type UnsubscribeClaim, unpackClaim } from './token-payload.ts';

/**
 * The one-click unsubscribe (RFC 8058, docs/streams.md): the token names the account, the
 * recipient and the broadcast it came with; the recipient is suppressed for that account's
 * broadcast stream and the message notes it (its `recipient.unsubscribed` event and the
 * `unsubscribed` counter follow from that note). Unknown, tampered or foreign tokens are 112 and
 * change nothing; a repeated POST changes nothing more.
 */
const badLink = () =>
  new ServiceError(Code.NotFound, 'This unsubscribe link is not valid', {
    details: [{ field: 'token', message: 'Unknown, altered or from another service' }],
  });

/** The claim of a token, or 112. */
export async function claimOf(token: string | undefined): Promise<UnsubscribeClaim> {
  const opened = token === undefined ? undefined : await openLinkToken('unsubscribe', token);
  const claim = opened === undefined ? undefined : unpackClaim(opened);
  if (claim === undefined) throw badLink();
  return claim;
}

export async function unsubscribe(token: string | undefined, now: Date = new Date()): Promise<void> {
  const claim = await claimOf(token);
  // Independent writes, side by side; both are idempotent, so a client's retry after a failure of
  // either completes the other.
  const [suppressed, noted] = await Promise.allSettled([
    suppressUnsubscribed(claim.account, claim.email, claim.messageUuid, now),
    noteOnMessage(claim, now),
  ]);
  if (suppressed.status === 'rejected') throw suppressed.reason;
  if (noted.status === 'rejected') throw noted.reason;
}

/**
 * The `unsubscribed` note on the recipient of the message, once. A message deleted since has no
 * note (the suppression stands); one being sent right now is left to its sender, as SES events are.
 */
async function noteOnMessage(claim: UnsubscribeClaim, now: Date): Promise<void> {
  const at = now.toISOString();
  await updateWithRetry(claim.messageUuid, (message) => {
    if (message.account_id !== claim.account || message.status === 'processing') return undefined;
    const recipient = message.recipients.find((candidate) => candidate.email.toLowerCase() === claim.email);
    if (recipient === undefined) return undefined;
    const noted = message.history.some(
      (entry) => entry.status === 'unsubscribed' && entry.recipient?.toLowerCase() === claim.email,
    );
    if (noted) return undefined;
    return {
      status: message.status,
      recipients: message.recipients,
      history: [recipientEntry('unsubscribed', at, recipient.email, 'One-click unsubscribe (RFC 8058)')],
      at,
    };
  });
}
