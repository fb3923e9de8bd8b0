import { call } from './host.ts';
import type { TestAccount } from './messages.ts';

/** Makes an API key with the account's JWT; the answer's `key` is the whole key, secret included. */
export async function makeKey(who: TestAccount, body: Record<string, unknown> = {}) {
  const response = await call('POST', '/apikey/add-1.0', {
    token: who.token,
    body: { name: 'test key', ...body },
  });
  if (response.status !== 200) throw new Error(`apikey add failed: ${response.status} ${response.text}`);
  return response.body.data as { key: string; api_key: Record<string, any> };
}

export function whoami(token: string) {
  return call('GET', '/whoami-1.0', { token });
}
