import * as table from '../../shared/platform/table/gateway.ts';
import { keys } from '../../shared/platform/table/keys.ts';
import { hostInfo } from './host.ts';

/**
 * A domain's default tracking, set straight in the table (the domain update route belongs to the
 * domains wing): the attribute `tracking` of the domain item, as that route writes it.
 */
export async function setDomainTracking(domain: string, tracking: { opens: boolean; clicks: boolean }) {
  await table.update({
    Key: keys.domain(domain),
    UpdateExpression: 'SET tracking = :tracking',
    ExpressionAttributeValues: { ':tracking': tracking },
  });
}

/** GET of a tracking URL as a mail client makes it: no redirect followed, the answer as it is. */
export async function visit(url: string, userAgent: string) {
  const response = await fetch(url, { redirect: 'manual', headers: { 'user-agent': userAgent } });
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, body };
}

/** The tracking URLs (`/t/o/…`, `/t/c/…`) of this host in a text. */
export function trackingUrls(text: string, kind: 'o' | 'c'): string[] {
  const base = hostInfo().url.replace(/\/$/, '');
  const pattern = new RegExp(`${base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/t/${kind}/[A-Za-z0-9_-]+`, 'g');
  return text.match(pattern) ?? [];
}

export const desktopClient = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.0';
export const applePrivacyProxy = 'Mozilla/5.0';

/**
 * Waits until the host's functions have finished what they do after answering (the tracking routes
 * record their hit after the answer: infra/local/after-response-work.ts).
 */
export async function afterResponsesSettled(): Promise<void> {
  const response = await fetch(`${hostInfo().url.replace(/\/$/, '')}/_local/settled`);
  if (response.status !== 204) throw new Error(`/_local/settled answered ${response.status}`);
}
