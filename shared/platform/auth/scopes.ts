/**
 * Every access right a route may require (OAuth scopes in the token's `scope` or `scp`), with what
 * it allows: the one list the route declarations, the identity providers and the docs use.
 */
export const scopes = {
  'messages:send': 'Create messages, release or cancel held ones',
  'messages:read': 'Query your messages',
  'messages:read_content':
    'Read the content of your messages: bodies, headers, attachments, the signed message',
  'messages:delete': 'Delete your unsent messages',
  'domains:read': 'Read DKIM settings of your domains',
  'domains:write': 'Change DKIM settings of your domains',
  'avatars:read': 'Look up avatars',
  'keepalive:run': 'Run keepalive housekeeping',
  'suppressions:read': 'Read your suppression list',
  'suppressions:write': 'Add addresses to or remove them from your suppression list',
  'webhooks:read': 'List your webhook endpoints and their delivery attempts',
  'webhooks:write': 'Add, change, test, delete, rotate and replay your webhook endpoints',
  'templates:read': 'Read your templates and render previews',
  'templates:write': 'Add, change, publish and delete your templates',
  'inbound:read': 'Read the mail your receiving domains received',
  'inbound:write': 'Delete received mail',
  'keys:read': 'List your API keys (never their secrets)',
  'keys:write': 'Create, rotate and revoke your API keys',
} as const;

export type Scope = keyof typeof scopes;
