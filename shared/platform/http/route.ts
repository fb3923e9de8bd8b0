import type { $ZodType } from 'zod/v4/core';
import type { AccessNeeds } from '../access.ts';
import type { Scope } from '../auth/scopes.ts';
import type { ErrorCode } from '../errors/catalogue.ts';

/**
 * A route, declared once in its wing's routes.ts: what the chain needs at run time (this interface,
 * imported by the route's handler) and, beside it in the same file, its `RouteDetails`, which the
 * OpenAPI document, the stack, IAM and the local host derive from and no function bundles.
 */
export type HttpMethod = 'GET' | 'POST';

export interface Route {
  /** Also the function's folder: functions/<id>/handler.ts. */
  readonly id: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly public: boolean;
  readonly scopes: readonly Scope[];
  readonly dryRun: boolean;
  /**
   * The function answers first and then finishes its work (shared/platform/http/after-response.ts):
   * a streamed integration on AWS, the local gateway answering when the response stream ends.
   */
  readonly afterResponse?: boolean;
}

/**
 * Declares a route: `route('message-add', 'POST /message/add-1.0', ['messages:send'], { dryRun: true })`.
 * Protected (a token with `scopes`) and without a dry run unless the options say otherwise.
 */
export function route<const Id extends string>(
  id: Id,
  endpoint: `${HttpMethod} /${string}`,
  scopes: readonly Scope[],
  options: { public?: boolean; dryRun?: boolean; afterResponse?: boolean } = {},
): Route & { readonly id: Id } {
  const [method, path] = endpoint.split(' ') as [HttpMethod, string];
  return {
    id,
    method,
    path,
    public: options.public ?? false,
    scopes,
    dryRun: options.dryRun ?? false,
    ...(options.afterResponse === true ? { afterResponse: true } : {}),
  };
}

/** The OpenAPI tag a route is listed under. */
export type RouteTag =
  | 'messages'
  | 'stats'
  | 'domains'
  | 'avatars'
  | 'service'
  | 'suppressions'
  | 'webhooks'
  | 'templates'
  | 'inbound'
  | 'apikeys'
  | 'streams';

export interface Example {
  summary: string;
  /** A body (requestIn 'body'), the query parameters (requestIn 'query') or the `data` member. */
  value: unknown;
}

export interface HeaderParameter {
  name: string;
  description: string;
  required: boolean;
  schema: Record<string, unknown>;
  example: string;
}

/**
 * What is said of a route besides what the chain needs: its summary and tag, what its function may
 * touch (`access`), its schedule, and its contract: the zod schemas of its request and of its success
 * response (the `data` member of the envelope; the OpenAPI generator wraps it), its own error codes
 * beyond those the chain derives (gateway, auth, scopes, dry run, JSON, validation), and examples,
 * which test/integration/openapi.test.ts checks against the schemas.
 */
export type RouteDetails = {
  summary: string;
  tag: RouteTag;
  access: AccessNeeds;
  /** Also invoked on a schedule (EventBridge on AWS, a timer locally), every so many minutes. */
  schedule?: { everyMinutes: number };
  response?: $ZodType;
  errors?: readonly ErrorCode[];
  /** Request headers the route reads besides Authorization. */
  headers?: readonly HeaderParameter[];
  examples?: { request?: Record<string, Example>; response?: Record<string, Example> };
  /**
   * The success body is not the `{"data": …}` envelope: the OpenAPI document itself, or (with
   * `status` and `contentType`) a route answered to browsers and mail clients (tracking).
   */
  raw?: { description: string; status?: number; contentType?: string; notFound?: string };
  /** The success answer is a page (`text/html`) or empty (no content type), not the envelope. */
  page?: { description: string; contentType?: 'text/html' };
  /** `{name}` segments of the path, by name: their descriptions and examples. */
  pathParameters?: Record<string, { description: string; example: string }>;
  /** A form-encoded request body (`application/x-www-form-urlencoded`): its fields. */
  form?: Record<string, { description: string; example: string }>;
} & (
  | { request?: undefined; requestIn?: undefined }
  | { request: $ZodType; requestIn: 'body' | 'query' | 'path' }
);

/** The details of each route of a list, keyed by route id. */
export type RouteDetailsOf<R extends Route> = Record<R['id'], RouteDetails>;

/**
 * The `{name}` segments of `pathname` when it matches the route path `template` (as API Gateway
 * matches a resource path): each segment of the template is a literal or one `{name}` segment of
 * at least one character without a slash. Undefined when it does not match.
 */
export function matchRoutePath(template: string, pathname: string): Record<string, string> | undefined {
  const want = template.split('/');
  const have = pathname.split('/');
  if (want.length !== have.length) return undefined;
  const parameters: Record<string, string> = {};
  for (let index = 0; index < want.length; index++) {
    const part = want[index] as string;
    const value = have[index] as string;
    const name = /^\{([A-Za-z0-9_]+)\}$/.exec(part)?.[1];
    if (name === undefined) {
      if (part !== value) return undefined;
    } else {
      if (value === '') return undefined;
      try {
        parameters[name] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    }
  }
  return parameters;
}
