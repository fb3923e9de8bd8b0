import { inIpv4Range } from './client-address.ts';

/**
 * Whether an open was made by a machine rather than a person reading (docs/tracking.md,
 * "Machine opens"): the open's `machine_open`, and why. Mail providers fetch images for their
 * users, so such an open says the mail arrived, not that anyone read it:
 *
 * - `apple-privacy-proxy`: Apple Mail Privacy Protection fetches every image of every message on
 *   delivery, from Apple's network (17.0.0.0/8) with a bare `Mozilla/5.0` user agent;
 * - `image-proxy`: Google's (`GoogleImageProxy`) and Yahoo's (`YahooMailProxy`) image proxies;
 * - `prefetch`: an open within `prefetchSeconds` of the relay accepting the message by a client
 *   that is no browser engine (no `AppleWebKit`, `Gecko`, `Trident` or `Outlook` in its user
 *   agent): the receiving provider's scanner fetching on delivery, faster than anyone reads.
 */
export const prefetchSeconds = 10;

export type MachineReason = 'apple-privacy-proxy' | 'image-proxy' | 'prefetch';

export interface OpenFacts {
  /** The full client address, looked at here and never stored. */
  address: string;
  userAgent: string;
  /** When the relay accepted the message for this recipient (UTC ISO), if known. */
  sentAt?: string;
  at: Date;
}

const mailClients = /AppleWebKit|Gecko|Trident|Outlook|Thunderbird/i;
const imageProxies = /GoogleImageProxy|YahooMailProxy|ggpht\.com/i;

export function machineOpenReason(facts: OpenFacts): MachineReason | undefined {
  const address = facts.address.startsWith('::ffff:') ? facts.address.slice(7) : facts.address;
  if (inIpv4Range(address, '17.0.0.0', 8)) return 'apple-privacy-proxy';
  if (facts.userAgent.trim() === 'Mozilla/5.0') return 'apple-privacy-proxy';
  if (imageProxies.test(facts.userAgent)) return 'image-proxy';
  if (facts.sentAt !== undefined && !mailClients.test(facts.userAgent)) {
    const elapsed = facts.at.getTime() - Date.parse(facts.sentAt);
    if (elapsed >= 0 && elapsed < prefetchSeconds * 1000) return 'prefetch';
  }
  return undefined;
}
