import { type HtmlScan, scanHtml } from './html-links.ts';

/**
 * The HTML part as sent with tracking (pure: the URLs are given): each trackable link's `href`
 * replaced by its click URL, every `data-svc-track` attribute removed, and the open pixel placed
 * before `</body>` (at the end of a fragment, which the composer wraps in a document). Everything
 * else is kept byte for byte.
 */
export interface RewriteOptions {
  /** The click URL of link `index`; undefined: links are left alone (the markers still go). */
  clickUrl?: (index: number) => string;
  /** The open pixel's URL; undefined: no pixel. */
  openUrl?: string;
  /** Links under this prefix are never rewritten (the unsubscribe URL). */
  excludedPrefix: string;
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

export const openPixel = (url: string) =>
  `<img src="${escapeAttribute(url)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;

/** `scan`: the part's scan when the caller made it already (one pass over the HTML in all). */
export function rewriteHtml(
  html: string,
  options: RewriteOptions,
  scan: HtmlScan = scanHtml(html, options.excludedPrefix),
): string {
  const edits: Array<{ start: number; end: number; text: string }> = scan.markers.map((marker) => ({
    ...marker,
    text: '',
  }));
  if (options.clickUrl !== undefined) {
    const clickUrl = options.clickUrl;
    scan.links.forEach((link, index) => {
      edits.push({ start: link.start, end: link.end, text: `href="${escapeAttribute(clickUrl(index))}"` });
    });
  }
  if (options.openUrl !== undefined) {
    const at = scan.bodyEnd ?? html.length;
    edits.push({ start: at, end: at, text: openPixel(options.openUrl) });
  }
  edits.sort((a, b) => a.start - b.start);
  const pieces: string[] = [];
  let position = 0;
  for (const edit of edits) {
    if (edit.start < position) continue;
    pieces.push(html.slice(position, edit.start), edit.text);
    position = edit.end;
  }
  pieces.push(html.slice(position));
  return pieces.join('');
}
