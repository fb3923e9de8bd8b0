/**
 * The route table: the single source for the local gateway, the CDK stack (one Lambda per route)
 * and the OpenAPI document. Data only, so that any function can import it for free; what is said of
 * each route (its summary, its OpenAPI tag) is in route-docs.ts, which no function bundles.
 */
export type HttpMethod = 'GET' | 'POST';

export interface Route {
  /** Also the function's folder: functions/<id>/handler.ts. */
  readonly id: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly public: boolean;
  readonly scopes: readonly string[];
  readonly dryRun: boolean;
}

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
  'webhooks:write': 'Add, delete, rotate and replay your webhook endpoints',
  'templates:read': 'Read your templates and render previews',
  'templates:write': 'Add, change, publish and delete your templates',
  'inbound:read': 'Read the mail your receiving domains received',
  'inbound:write': 'Delete received mail',
} as const;

export type Scope = keyof typeof scopes;

export const routes = [
  {
    id: 'health',
    method: 'GET',
    path: '/health',
    public: true,
    scopes: [],
    dryRun: false,
  },
  {
    id: 'keepalive-status',
    method: 'GET',
    path: '/keepalive-1.0',
    public: true,
    scopes: [],
    dryRun: false,
  },
  {
    id: 'keepalive-run',
    method: 'POST',
    path: '/keepalive-1.0',
    public: false,
    scopes: ['keepalive:run'],
    dryRun: false,
  },
  {
    id: 'openapi',
    method: 'GET',
    path: '/openapi.json',
    public: true,
    scopes: [],
    dryRun: false,
  },
  {
    id: 'message-add',
    method: 'POST',
    path: '/message/add-1.0',
    public: false,
    scopes: ['messages:send'],
    dryRun: true,
  },
  {
    id: 'message-batch',
    method: 'POST',
    path: '/message/batch-1.0',
    public: false,
    scopes: ['messages:send'],
    dryRun: true,
  },
  {
    id: 'message-query',
    method: 'POST',
    path: '/message/query-1.0',
    public: false,
    scopes: ['messages:read'],
    dryRun: false,
  },
  {
    id: 'message-content',
    method: 'POST',
    path: '/message/content-1.0',
    public: false,
    scopes: ['messages:read_content'],
    dryRun: false,
  },
  {
    id: 'message-delete',
    method: 'POST',
    path: '/message/delete-1.0',
    public: false,
    scopes: ['messages:delete'],
    dryRun: true,
  },
  {
    id: 'stats-query',
    method: 'POST',
    path: '/stats/query-1.0',
    public: false,
    scopes: ['messages:read'],
    dryRun: false,
  },
  {
    id: 'dkim-status',
    method: 'GET',
    path: '/domain/dkim/status-1.0',
    public: false,
    scopes: ['domains:read'],
    dryRun: false,
  },
  {
    id: 'dkim-set-algorithm',
    method: 'POST',
    path: '/domain/dkim/set-algorithm-1.0',
    public: false,
    scopes: ['domains:write'],
    dryRun: true,
  },
  {
    id: 'avatar-get',
    method: 'GET',
    path: '/avatar/get-1.0',
    public: false,
    scopes: ['avatars:read'],
    dryRun: false,
  },
  {
    id: 'suppression-query',
    method: 'POST',
    path: '/suppression/query-1.0',
    public: false,
    scopes: ['suppressions:read'],
    dryRun: false,
  },
  {
    id: 'suppression-add',
    method: 'POST',
    path: '/suppression/add-1.0',
    public: false,
    scopes: ['suppressions:write'],
    dryRun: true,
  },
  {
    id: 'suppression-delete',
    method: 'POST',
    path: '/suppression/delete-1.0',
    public: false,
    scopes: ['suppressions:write'],
    dryRun: true,
  },
  {
    id: 'webhook-add',
    method: 'POST',
    path: '/webhook/add-1.0',
    public: false,
    scopes: ['webhooks:write'],
    dryRun: false,
  },
  {
    id: 'webhook-query',
    method: 'POST',
    path: '/webhook/query-1.0',
    public: false,
    scopes: ['webhooks:read'],
    dryRun: false,
  },
  {
    id: 'webhook-delete',
    method: 'POST',
    path: '/webhook/delete-1.0',
    public: false,
    scopes: ['webhooks:write'],
    dryRun: false,
  },
  {
    id: 'webhook-rotate-secret',
    method: 'POST',
    path: '/webhook/rotate-secret-1.0',
    public: false,
    scopes: ['webhooks:write'],
    dryRun: false,
  },
  {
    id: 'webhook-replay',
    method: 'POST',
    path: '/webhook/replay-1.0',
    public: false,
    scopes: ['webhooks:write'],
    dryRun: false,
  },
  {
    id: 'template-add',
    method: 'POST',
    path: '/template/add-1.0',
    public: false,
    scopes: ['templates:write'],
    dryRun: true,
  },
  {
    id: 'template-update',
    method: 'POST',
    path: '/template/update-1.0',
    public: false,
    scopes: ['templates:write'],
    dryRun: true,
  },
  {
    id: 'template-publish',
    method: 'POST',
    path: '/template/publish-1.0',
    public: false,
    scopes: ['templates:write'],
    dryRun: true,
  },
  {
    id: 'template-query',
    method: 'POST',
    path: '/template/query-1.0',
    public: false,
    scopes: ['templates:read'],
    dryRun: false,
  },
  {
    id: 'template-delete',
    method: 'POST',
    path: '/template/delete-1.0',
    public: false,
    scopes: ['templates:write'],
    dryRun: true,
  },
  {
    id: 'template-render',
    method: 'POST',
    path: '/template/render-1.0',
    public: false,
    scopes: ['templates:read'],
    dryRun: false,
  },
  {
    id: 'inbound-query',
    method: 'POST',
    path: '/inbound/query-1.0',
    public: false,
    scopes: ['inbound:read'],
    dryRun: false,
  },
  {
    id: 'inbound-delete',
    method: 'POST',
    path: '/inbound/delete-1.0',
    public: false,
    scopes: ['inbound:write'],
    dryRun: false,
  },
] as const satisfies readonly Route[];

export type RouteId = (typeof routes)[number]['id'];

export function routeById(id: RouteId): Route {
  const route = routes.find((candidate) => candidate.id === id);
  if (route === undefined) throw new Error(`Unknown route ${id}`);
  return route;
}

/**
 * The largest request body the service accepts: 6 MB (6,000,000 bytes). Lambda's synchronous
 * payload limit (6 MiB, 6,291,456 bytes) holds the whole event, the body as a JSON string beside
 * headers and request context, so a body of 6 MiB itself would fail inside AWS; the 291,456 bytes
 * between them are kept for the rest of the event and the body's JSON escaping.
 */
export const requestLimits = { maxBodyBytes: 6_000_000, maxBodyMegabytes: 6 } as const;

/** The detail of a 107 for a request body over the gateway's limit (local gateway and stack alike). */
export const tooLargeDetail = {
  field: '(body)',
  message: `The request is larger than the gateway accepts: at most ${requestLimits.maxBodyMegabytes} MB`,
} as const;

/** The message of a 102: which method(s) the path does accept. */
export function methodNotAllowedMessage(path: string, allow: string): string {
  return `${path} accepts only ${allow}`;
}
