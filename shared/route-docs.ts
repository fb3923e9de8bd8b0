import type { RouteId } from './routes.ts';

/**
 * What the OpenAPI document, the stack's function descriptions and its alarms say of each route.
 * Apart from the route table, which every function bundles (and health and GET keepalive have 20 KB
 * each); `satisfies` keeps it to exactly the table's routes.
 */
export type RouteTag =
  | 'messages'
  | 'stats'
  | 'domains'
  | 'avatars'
  | 'service'
  | 'suppressions'
  | 'webhooks'
  | 'templates'
  | 'inbound';

export interface RouteDoc {
  readonly summary: string;
  readonly tag: RouteTag;
}

export const routeDocs = {
  health: { tag: 'service', summary: 'Service health and the caller address' },
  'keepalive-status': { tag: 'service', summary: 'Uptime probe' },
  'keepalive-run': { tag: 'avatars', summary: 'Run avatar housekeeping' },
  openapi: { tag: 'service', summary: 'This API as an OpenAPI 3.0 document' },
  'message-add': { tag: 'messages', summary: 'Accept a message for sending, or release/cancel a held one' },
  'message-batch': { tag: 'messages', summary: 'Accept up to 500 messages in one request' },
  'message-query': { tag: 'messages', summary: 'One message in full, or a filtered page of messages' },
  'message-content': {
    tag: 'messages',
    summary: 'The content of one message: subject, bodies, headers, attachments and the signed message',
  },
  'message-delete': { tag: 'messages', summary: 'Delete messages that have not been sent' },
  'stats-query': {
    tag: 'stats',
    summary: 'Hourly or daily counts of your messages by status, with bounce and complaint rates',
  },
  'dkim-status': { tag: 'domains', summary: 'DKIM configuration, keys and DNS status of a domain' },
  'dkim-set-algorithm': { tag: 'domains', summary: 'Rotate to a new DKIM key with the given algorithm' },
  'avatar-get': { tag: 'avatars', summary: 'Avatar image URL for an e-mail address' },
  'suppression-query': {
    tag: 'suppressions',
    summary: 'One address of your suppression list, or a filtered page of it',
  },
  'suppression-add': { tag: 'suppressions', summary: 'Suppress addresses for your account' },
  'suppression-delete': { tag: 'suppressions', summary: 'Remove addresses from your suppression list' },
  'webhook-add': {
    tag: 'webhooks',
    summary: 'Add a webhook endpoint; the answer carries its signing secret',
  },
  'webhook-query': {
    tag: 'webhooks',
    summary: 'Your webhook endpoints, or one with its latest delivery attempts',
  },
  'webhook-delete': { tag: 'webhooks', summary: 'Delete a webhook endpoint' },
  'webhook-rotate-secret': { tag: 'webhooks', summary: 'Rotate the signing secret of a webhook endpoint' },
  'webhook-replay': { tag: 'webhooks', summary: 'Deliver a past event to a webhook endpoint again' },
  'template-add': { tag: 'templates', summary: 'Add a template with its first version (a draft)' },
  'template-update': { tag: 'templates', summary: 'Make a new draft version of a template, or rename it' },
  'template-publish': {
    tag: 'templates',
    summary: 'Make a version of a template the live one (an older one: rollback)',
  },
  'template-query': {
    tag: 'templates',
    summary: 'One template with a version in full, or a page of your templates',
  },
  'template-delete': { tag: 'templates', summary: 'Delete a template with all its versions' },
  'template-render': {
    tag: 'templates',
    summary: "Render a template or inline parts over a model (the editor's preview)",
  },
  'inbound-query': {
    tag: 'inbound',
    summary: 'One received message in full, or a filtered page of received mail',
  },
  'inbound-delete': { tag: 'inbound', summary: 'Delete a received message and its stored content' },
} as const satisfies Record<RouteId, RouteDoc>;
