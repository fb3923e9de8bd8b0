import { publicApiUrl } from '../platform/config/public-url.ts';
import { sealIndexedLinkTokens, sealLinkToken } from '../platform/tokens/link-tokens.ts';
import { scanHtml } from './model/html-links.ts';
import { rewriteHtml } from './model/rewrite.ts';
import type { TrackingSettings } from './model/settings.ts';
import { encodeOpen } from './model/token-payload.ts';

/** Links under this prefix are the one-click unsubscribe route's, never tracked. */
export const unsubscribePrefix = (): string => `${publicApiUrl()}/unsubscribe/`;

/**
 * The HTML part as sent to one recipient with tracking (docs/tracking.md): its links rewritten to
 * `GET /t/c/<token>`, the pixel `GET /t/o/<token>` before `</body>`. Tokens are sealed with a
 * synthetic IV, so composing again (the content route) yields the same bytes; the click tokens of
 * one copy share one seal of (message, recipient), each with its link's index under a MAC.
 */
export async function trackedHtml(
  html: string,
  target: { messageUuid: string; recipientIndex: number },
  settings: TrackingSettings,
): Promise<string> {
  const base = publicApiUrl();
  const excludedPrefix = unsubscribePrefix();
  const payload = encodeOpen({ messageUuid: target.messageUuid, recipient: target.recipientIndex });
  // One linear scan: the links to seal tokens for, then the pure rewrite at the positions it found.
  const scan = scanHtml(html, excludedPrefix);
  let clickUrl: ((index: number) => string) | undefined;
  if (settings.clicks) {
    const tokens = await sealIndexedLinkTokens('click', payload, scan.links.length);
    clickUrl = (index) => `${base}/t/c/${tokens[index]}`;
  }
  const openUrl = settings.opens
    ? `${base}/t/o/${await sealLinkToken('open', payload, { stable: true })}`
    : undefined;
  return rewriteHtml(html, { excludedPrefix, clickUrl, openUrl }, scan);
}
