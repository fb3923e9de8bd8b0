import { publicApiUrl } from '../../platform/config/public-url.ts';
import { sealLinkToken } from '../../platform/tokens/link-tokens.ts';
import { packClaim, type UnsubscribeClaim } from './token-payload.ts';

/** The path of the unsubscribe routes, below the public base URL. */
export const unsubscribePath = '/unsubscribe/';

/**
 * The one-click unsubscribe URL of one recipient of one broadcast: the public base URL
 * (PUBLIC_API_URL) and a sealed token naming the account, recipient, stream and message. Drawn
 * once per send and recorded with the composition, so the message can be rebuilt as sent.
 */
export async function unsubscribeUrlFor(claim: Omit<UnsubscribeClaim, 'stream'>): Promise<string> {
  const token = await sealLinkToken('unsubscribe', packClaim({ stream: 'broadcast', ...claim }));
  return `${publicApiUrl()}${unsubscribePath}${token}`;
}
