import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { headerValue } from '../../shared/delivery/mail/compose.ts';
import { testDnsServer } from './dns.ts';
import { call } from './host.ts';

/** What dkimpy (an implementation independent of the service's signer) says of each signature. */
export function dkimpyVerdicts(raw: Buffer): Array<{ domain: string; verified: boolean; h: string[] }> {
  const output = execFileSync(
    '/usr/bin/python3',
    [join(import.meta.dirname, 'dkimpy-verify.py'), testDnsServer()],
    {
      input: raw,
    },
  );
  return JSON.parse(output.toString('utf8'));
}

/** The one-click URL of a delivered broadcast, from its List-Unsubscribe header. */
export function unsubscribeUrlOf(raw: Buffer): string {
  const value = headerValue(raw, 'List-Unsubscribe');
  const url = value?.match(/^<(https?:\/\/[^>]+)>$/)?.[1];
  if (url === undefined) throw new Error(`no one-click URL in List-Unsubscribe: ${value}`);
  return url;
}

/** The path of an unsubscribe URL, to call through the test host. */
export const pathOf = (url: string): string => new URL(url).pathname;

/** POSTs the one-click request exactly as Gmail does: no cookie, form-encoded, a provider's User-Agent. */
export function postOneClick(url: string, body = 'List-Unsubscribe=One-Click') {
  return call('POST', pathOf(url), {
    rawBody: body,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'Mozilla/5.0 (compatible; Google-Unsubscribe)',
    },
  });
}
