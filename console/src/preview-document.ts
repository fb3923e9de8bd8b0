/**
 * The document a message or template preview shows: the mail's HTML behind a Content-Security-Policy
 * of its own that runs nothing and loads nothing remote (inline styles and `data:` images only)
 * until the user asks for remote images. The frame that shows it is sandboxed without
 * `allow-scripts` as well (preview.tsx), so a `<script>` in the HTML cannot run either way. Pure:
 * no DOM.
 */
export function previewPolicy(remoteImages: boolean): string {
  return [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `img-src data: cid:${remoteImages ? ' https: http:' : ''}`,
    'font-src data:',
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

export function previewDocument(html: string, remoteImages: boolean): string {
  // The policy must be the first thing in <head>: the mail's own markup follows in <body>, where
  // any <meta> or <base> of its own is ignored by the parser's rules for a body.
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${escapeAttribute(
    previewPolicy(remoteImages),
  )}"><meta name="referrer" content="no-referrer"><base target="_blank"></head><body>${html}</body></html>`;
}

/** Whether the HTML names an image or a style resource on the network (to offer loading them). */
export function hasRemoteImages(html: string): boolean {
  return /\b(src|background|srcset)\s*=\s*["']?\s*(https?:)?\/\/|url\(\s*["']?\s*(https?:)?\/\//i.test(html);
}
