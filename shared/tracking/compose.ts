import { publicApiUrl } from '../platform/config/public-url.ts';
import { sealLinkToken, sealLinkTokens } from '../platform/tokens/link-tokens.ts';
import { scanHtml } from './model/html-links.ts';
import { rewriteHtml } from './model/rewrite.ts';
import type { TrackingSettings } from './model/settings.ts';
import { encodeClick, encodeOpen } from './model/token-payload.ts';

/** Links under this prefix are the one-click unsubscribe route's, never tracked. */
export const unsubscribePrefix = (): string => `${publicApiUrl()}/unsubscribe/`;

/**
 * The HTML part as sent to one recipient with tracking (docs/tracking.md): its links rewritten to
 * `GET /t/c/<token>`, the pixel `GET /t/o/<token>` before `</body>`. Tokens are sealed with a
 * synthetic IV, so composing again (the content route) yields the same bytes.
 */
export async function trackedHtml(
  html: string,
  target: { messageUuid: string; recipientIndex: number },
  settings: TrackingSettings,
): Promise<string> {
  const base = publicApiUrl();
  const excludedPrefix = unsubscribePrefix();
  const payload = { messageUuid: target.messageUuid, recipient: target.recipientIndex };
  // One linear scan: the links to seal tokens for, then the pure rewrite at the positions it found.
  const scan = scanHtml(html, excludedPrefix);
  let clickUrl: ((index: number) => string) | undefined;
  if (settings.clicks) {
    const tokens = await sealLinkTokens(
      'click',
      scan.links.map((_, link) => encodeClick({ ...payload, link })),
      { stable: true },
    );
    clickUrl = (index) => `${base}/t/c/${tokens[index]}`;
  }
  const openUrl = settings.opens
    ? `${base}/t/o/${await sealLinkToken('open', encodeOpen(payload), { stable: true })}`
    : undefined;
  return rewriteHtml(html, { excludedPrefix, clickUrl, openUrl }, scan);
}
