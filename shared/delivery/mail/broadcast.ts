import { unsubscribePlaceholder } from '../../messages/index.ts';

/**
 * What a broadcast message gets when it is composed (docs/streams.md), before any link rewriting
 * and before DKIM signing, so the signature covers all of it: the RFC 8058 headers (an HTTPS URI
 * only: the service receives no mail for unsubscribe addresses, so it offers no `mailto:`), the
 * RFC 2919 List-Id, and a visible link in the body: the placeholder replaced where the sender put
 * it, else a short footer appended to each part that lacks it. Pure.
 */
export const listHeaderNames = ['List-Unsubscribe', 'List-Unsubscribe-Post', 'List-Id'] as const;

export function broadcastHeaders(unsubscribeUrl: string, listId: string | undefined): Record<string, string> {
  return {
    'List-Unsubscribe': `<${unsubscribeUrl}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    ...(listId === undefined ? {} : { 'List-Id': listId }),
  };
}

/** The caller's headers without the list headers the service sets on a broadcast. */
export function withoutListHeaders(headers: Record<string, string>): Record<string, string> {
  const names = new Set(listHeaderNames.map((name) => name.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase())));
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

export function textWithUnsubscribeLink(text: string, url: string): string {
  if (text.includes(unsubscribePlaceholder)) return text.replaceAll(unsubscribePlaceholder, url);
  return `${text.replace(/\s+$/, '')}\n\n--\nUnsubscribe: ${url}\n`;
}

export function htmlWithUnsubscribeLink(html: string, url: string): string {
  if (html.includes(unsubscribePlaceholder))
    return html.replaceAll(unsubscribePlaceholder, escapeAttribute(url));
  const footer = `<p style="font-size:12px;color:#666;margin-top:24px"><a href="${escapeAttribute(url)}">Unsubscribe</a></p>`;
  const end = html.search(/<\/body\s*>/i);
  return end === -1 ? `${html}\n${footer}\n` : `${html.slice(0, end)}${footer}\n${html.slice(end)}`;
}

/** An EML's placeholders replaced by the link (the EML was refused on acceptance without one). */
export function emlWithUnsubscribeLink(eml: Buffer, url: string): Buffer {
  const text = eml.toString('latin1');
  return text.includes(unsubscribePlaceholder)
    ? Buffer.from(text.replaceAll(unsubscribePlaceholder, url), 'latin1')
    : eml;
}
