import { type CallOptions, call } from './host.ts';

/** One call to a template route with the account's token (every scope unless given another). */
export async function templateCall(
  who: { token: string },
  action: 'add' | 'update' | 'publish' | 'query' | 'delete' | 'render',
  body: unknown,
  options: Omit<CallOptions, 'token' | 'body'> = {},
) {
  return call('POST', `/template/${action}-1.0`, { token: who.token, body, ...options });
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
