import { type CallOptions, call } from './host.ts';

/**
 * One call to a template route with the account's token (every scope unless given another). A 115
 * (the per-account rate limit, when a test writes many versions) is waited out as a client must.
 */
export async function templateCall(
  who: { token: string },
  action: 'add' | 'update' | 'publish' | 'query' | 'delete' | 'render',
  body: unknown,
  options: Omit<CallOptions, 'token' | 'body'> = {},
) {
  for (;;) {
    const response = await call('POST', `/template/${action}-1.0`, { token: who.token, body, ...options });
    if (response.status !== 429) return response;
    const seconds = Number(response.headers.get('retry-after') ?? '1');
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, seconds) * 1000));
  }
}

/** The call's `data`, or an error naming the answer. */
export async function templateData(
  who: { token: string },
  action: 'add' | 'update' | 'publish' | 'query' | 'delete' | 'render',
  body: unknown,
): Promise<Record<string, any>> {
  const response = await templateCall(who, action, body);
  if (response.status !== 200) throw new Error(`${action} failed: ${response.status} ${response.text}`);
  return response.body.data as Record<string, any>;
}

/** `{version: status}` of a template's versions, from a write or query answer. */
export function statuses(template: {
  versions: Array<{ version: number; status: string }>;
}): Record<number, string> {
  return Object.fromEntries(template.versions.map((entry) => [entry.version, entry.status]));
}
