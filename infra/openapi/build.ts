import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { globalRegistry, toJSONSchema } from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import { scopes } from '../../shared/platform/auth/scopes.ts';
import { Code, catalogue, type ErrorCode } from '../../shared/platform/errors/catalogue.ts';
import { requestLimits } from '../../shared/platform/http/limits.ts';
import type { Example, Route, RouteDetails } from '../../shared/platform/http/route.ts';
import { dryRunValues } from '../../shared/platform/middleware/dry-run.ts';
import { type RouteId, routeDetails, routes } from '../../shared/routes.ts';
import {
  webhookEvent,
  webhookEventExamples,
  webhookEventSchemas,
} from '../../shared/webhooks/event-schemas.ts';
import { operationLinks } from './links.ts';

/**
 * Generates the OpenAPI 3.0.3 document from the route table (paths, methods, scopes, dry run) and
 * the zod schemas of each route's details (in its wing's routes.ts). `npm run openapi` writes it to docs/openapi.json, which
 * is committed, served by GET /openapi.json and checked for staleness by a test.
 */
type Schema = Record<string, unknown>;

const projectRoot = join(import.meta.dirname, '..', '..');
export const documentPath = join(projectRoot, 'docs', 'openapi.json');
export const clientTypesPath = join(projectRoot, 'clients', 'openapi.ts');

const requestIdHeader = {
  'x-request-id': {
    description: 'Identifies the request in logs and support questions',
    schema: { type: 'string' },
  },
};
const etagHeader = { description: 'Version of the document', schema: { type: 'string' } };
const retryAfter = { description: 'Seconds to wait before retrying', schema: { type: 'integer' } };
const rateLimitHeaders = {
  'RateLimit-Limit': { description: 'Requests allowed in a burst', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current burst', schema: { type: 'integer' } },
  'RateLimit-Reset': {
    description: 'Seconds until the burst is available again',
    schema: { type: 'integer' },
  },
};

/** zod → OpenAPI 3.0 schema; `$defs` (schemas registered with an id) become components. */
function toSchema(schema: $ZodType, io: 'input' | 'output', components: Record<string, Schema>): Schema {
  const json = toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as Schema;
  const { $schema: _dialect, $defs, ...rest } = json as Schema & { $defs?: Record<string, Schema> };
  const rewrite = (value: Schema): Schema =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/')) as Schema;
  for (const [name, definition] of Object.entries($defs ?? {})) components[name] = rewrite(definition);
  return rewrite(rest);
}

function mentionsEmail(schema: Schema | undefined): boolean {
  return schema !== undefined && JSON.stringify(schema).includes('"format":"email"');
}

/** Every code a route can answer: the chain's, the gateway's, and the route's own. */
export function codesOf(route: Route, entry: RouteDetails, request: Schema | undefined): ErrorCode[] {
  const codes = new Set<ErrorCode>([
    Code.IpBlocked,
    Code.TooManyRequests,
    Code.Internal,
    Code.ActionNotMapped,
  ]);
  if (!route.public) {
    for (const code of [
      Code.AuthorizationMissing,
      Code.TokenExpired,
      Code.TokenInvalid,
      Code.AccessDenied,
      Code.ValidationUnavailable,
      Code.DatabaseNotConfigured,
      Code.DatabaseUnavailable,
    ] as const)
      codes.add(code);
  }
  if (!route.dryRun) codes.add(Code.DryRunNotAllowed);
  // Any route refuses a `?dry_run=` value other than true, false, 1 or 0.
  codes.add(Code.InvalidInput);
  if (entry.requestIn === 'body') codes.add(Code.InvalidJson);
  if (entry.request !== undefined) {
    codes.add(Code.InvalidInput);
    codes.add(Code.ValidatorFailed);
    if (mentionsEmail(request)) codes.add(Code.InvalidEmail);
  }
  for (const code of entry.errors ?? []) codes.add(code);
  return [...codes].sort((a, b) => a - b);
}

/** One response per HTTP status; its schema is the Error envelope with `code` narrowed to the list. */
function errorResponses(
  codes: readonly ErrorCode[],
  hasBody: boolean,
  components: Record<string, Schema>,
): Record<string, Schema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = catalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  // The gateway's payload limit is 107 too (HTTP 406, the catalogue's status).
  if (hasBody && !(byStatus.get(406) ?? []).includes(Code.InvalidInput))
    byStatus.set(406, [...(byStatus.get(406) ?? []), Code.InvalidInput]);
  const responses: Record<string, Schema> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const first = list[0] as ErrorCode;
    responses[String(status)] = {
      description:
        list.map((code) => `${code}: ${catalogue[code].message}`).join('; ') +
        (hasBody && status === 406
          ? ` (${Code.InvalidInput} also when the body exceeds the gateway's ${requestLimits.maxBodyMegabytes} MB limit)`
          : ''),
      headers:
        status === 429
          ? { ...requestIdHeader, 'Retry-After': retryAfter, ...rateLimitHeaders }
          : requestIdHeader,
      content: {
        'application/json': {
          schema: errorWithCodes(list, components),
          example: { error: { code: first, message: catalogue[first].message } },
        },
      },
    };
  }
  return responses;
}

/**
 * The error envelope whose `code` is one of `codes` (the catalogue's message is the default), as a
 * component named after the codes (`Error_104_105_110`), so operations with the same list share it.
 */
function errorWithCodes(codes: readonly ErrorCode[], components: Record<string, Schema>): Schema {
  const name = `Error_${codes.join('_')}`;
  components[name] ??= errorSchema(codes);
  return { $ref: `#/components/schemas/${name}` };
}

function errorSchema(codes: readonly ErrorCode[]): Schema {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: {
            type: 'integer',
            enum: [...codes],
            description: codes.map((code) => `${code}: ${catalogue[code].message}`).join('\n'),
          },
          message: { type: 'string' },
          details: { type: 'array', items: { $ref: '#/components/schemas/ErrorDetail' } },
        },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  };
}

/** Named examples → an OpenAPI `examples` map; `wrap` puts each value into the envelope. */
function examplesOf(examples: Record<string, Example> | undefined, wrap: boolean): Schema | undefined {
  if (examples === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(examples).map(([name, { summary, value }]) => [
      name,
      { summary, value: wrap ? { data: value } : value },
    ]),
  );
}

function operationId(id: string): string {
  return id.replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

function operation(route: Route, components: Record<string, Schema>): Schema {
  const entry: RouteDetails = routeDetails[route.id as RouteId];
  const request = entry.request === undefined ? undefined : toSchema(entry.request, 'input', components);
  const requestExamples = entry.examples?.request;
  const firstRequest = Object.values(requestExamples ?? {})[0]?.value as Record<string, unknown> | undefined;
  const parameters: Schema[] = [];
  let requestBody: Schema | undefined;
  if (request !== undefined && entry.requestIn === 'path') {
    for (const [name, schema] of Object.entries((request.properties ?? {}) as Record<string, Schema>)) {
      const { description, example, ...rest } = schema;
      parameters.push({
        name,
        in: 'path',
        required: true,
        ...(description === undefined ? {} : { description }),
        schema: rest,
        ...(example === undefined ? {} : { example }),
      });
    }
  } else if (request !== undefined && entry.requestIn === 'query') {
    const properties = (request.properties ?? {}) as Record<string, Schema>;
    const required = new Set((request.required ?? []) as string[]);
    for (const [name, schema] of Object.entries(properties)) {
      const { description, example, ...rest } = schema;
      const value = firstRequest?.[name] ?? example;
      parameters.push({
        name,
        in: 'query',
        required: required.has(name),
        ...(description === undefined ? {} : { description }),
        schema: rest,
        ...(value === undefined ? {} : { example: value }),
      });
    }
  } else if (request !== undefined) {
    const examples = examplesOf(requestExamples, false);
    requestBody = {
      required: true,
      content: { 'application/json': { schema: request, ...(examples === undefined ? {} : { examples }) } },
    };
  }
  for (const [name, parameter] of Object.entries(entry.pathParameters ?? {})) {
    parameters.push({
      name,
      in: 'path',
      required: true,
      description: parameter.description,
      schema: { type: 'string' },
      example: parameter.example,
    });
  }
  if (entry.form !== undefined) {
    const fields = Object.entries(entry.form);
    requestBody = {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            required: fields.map(([name]) => name),
            properties: Object.fromEntries(
              fields.map(([name, field]) => [
                name,
                { type: 'string', enum: [field.example], description: field.description },
              ]),
            ),
          },
        },
      },
    };
  }
  for (const header of entry.headers ?? []) parameters.push({ in: 'header', ...header });
  if (route.dryRun) {
    parameters.push({
      name: 'dry_run',
      in: 'query',
      required: false,
      description:
        'Run every check and report what would happen, changing nothing: `true` or `1`; `false` or `0` (the default) runs for real; any other value is 107',
      // `true`/`false` as a boolean (what clients send), and `1`/`0`: dryRunValues, nothing else.
      schema: {
        anyOf: [
          { type: 'boolean' },
          { type: 'string', enum: dryRunValues.filter((value) => /^\d$/.test(value)) },
        ],
        default: false,
      },
      example: true,
    });
  }

  const successExamples = examplesOf(entry.examples?.response, true);
  const responses: Record<string, Schema> = {};
  if (entry.page !== undefined) {
    responses['200'] = {
      description: entry.page.description,
      headers: requestIdHeader,
      ...(entry.page.contentType === undefined
        ? {}
        : { content: { [entry.page.contentType]: { schema: { type: 'string' } } } }),
    };
  } else if (entry.raw?.status !== undefined) {
    responses[String(entry.raw.status)] = {
      description: entry.raw.description,
      headers: requestIdHeader,
      ...(entry.raw.contentType === undefined
        ? {}
        : { content: { [entry.raw.contentType]: { schema: { type: 'string', format: 'binary' } } } }),
    };
  } else if (entry.raw !== undefined) {
    responses['200'] = {
      description: entry.raw.description,
      headers: { ...requestIdHeader, ETag: etagHeader },
      content: { 'application/json': { schema: { type: 'object' } } },
    };
    responses['304'] = {
      description: 'Not modified: the `If-None-Match` header named the current ETag (no body)',
      headers: { ...requestIdHeader, ETag: etagHeader },
    };
  } else {
    responses['200'] = {
      description: entry.summary,
      headers: requestIdHeader,
      ...(operationLinks[route.id] === undefined ? {} : { links: operationLinks[route.id] }),
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['data'],
            properties: {
              data:
                entry.response === undefined
                  ? { type: 'object' }
                  : toSchema(entry.response, 'output', components),
            },
            additionalProperties: false,
          },
          ...(successExamples === undefined ? {} : { examples: successExamples }),
        },
      },
    };
  }

  const scopeText = route.public
    ? 'Public: no token needed.'
    : `Needs a Bearer token with the scope${route.scopes.length > 1 ? 's' : ''} ${route.scopes.map((scope) => `\`${scope}\``).join(', ')}.`;
  return {
    operationId: operationId(route.id),
    summary: entry.summary,
    description: `${scopeText}${route.dryRun ? ' Supports `?dry_run=true`.' : ''}`,
    tags: [entry.tag],
    security: route.public ? [] : [{ bearer: [] }],
    ...(route.public ? {} : { 'x-scopes': [...route.scopes] }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody === undefined ? {} : { requestBody }),
    responses: {
      ...responses,
      ...errorResponses(codesOf(route, entry, request), route.method === 'POST', components),
      ...(entry.raw?.notFound === undefined
        ? {}
        : {
            '404': {
              description: entry.raw.notFound,
              headers: requestIdHeader,
              content: { 'text/html': { schema: { type: 'string' } } },
            },
          }),
    },
  };
}

/**
 * What the gateway answers to requests outside the operations (no function runs): an unknown path,
 * another method on a known path, a CORS preflight. OpenAPI has no place for "any other path", so
 * they live in this extension; the tests' response validator checks such answers against it.
 */
function gatewayResponses(): Record<string, Schema> {
  const answer = (code: ErrorCode, description: string, headers: Schema = {}): Schema => ({
    description: `${code}: ${description}`,
    headers: { ...requestIdHeader, ...headers },
    content: {
      'application/json': {
        schema: errorSchema([code]),
        example: { error: { code, message: catalogue[code].message } },
      },
    },
  });
  return {
    'unknown-path': {
      status: 404,
      response: answer(Code.EndpointNotConfigured, 'no endpoint at this path'),
    },
    'method-not-allowed': {
      status: 405,
      response: answer(Code.MethodNotAllowed, 'the path exists with other methods', {
        Allow: { description: 'The methods of the path', schema: { type: 'string' } },
      }),
    },
    preflight: {
      status: 202,
      response: answer(Code.Options, 'CORS preflight (OPTIONS) on a known path', {
        'Access-Control-Allow-Methods': { schema: { type: 'string' } },
        'Access-Control-Allow-Headers': { schema: { type: 'string' } },
      }),
    },
  };
}

/**
 * The bodies of webhook deliveries (shared/webhooks/event-schemas.ts) as components: one per kind,
 * named as in `webhookEventSchemas`, and `WebhookEvent`, the union a receiver gets, told apart by
 * `type` (an OpenAPI discriminator whose mapping names each type's component).
 */
function addWebhookEventComponents(components: Record<string, Schema>): void {
  const members: string[] = [];
  const mapping: Record<string, string> = {};
  for (const option of webhookEvent._zod.def.options) {
    const named = Object.entries(webhookEventSchemas).find(([, schema]) => schema === option);
    if (named === undefined) throw new Error('A member of webhookEvent is missing from webhookEventSchemas');
    const [name, schema] = named;
    const json = toSchema(schema, 'output', components);
    components[name] = json;
    const types = ((json.properties as Record<string, Schema>).type?.enum ?? []) as string[];
    for (const type of types) mapping[type] = `#/components/schemas/${name}`;
    members.push(name);
  }
  components.WebhookEvent = {
    description: globalRegistry.get(webhookEvent)?.description,
    oneOf: members.map((name) => ({ $ref: `#/components/schemas/${name}` })),
    discriminator: { propertyName: 'type', mapping },
  };
}

/**
 * The delivery itself. OpenAPI 3.0 has no `webhooks` (3.1 has), so it is described in the
 * `x-webhooks` extension that Redoc and Redocly read (a map of Path Items, as 3.1's `webhooks`): a POST
 * to the endpoint's URL with a `WebhookEvent` body and the Standard Webhooks headers.
 */
function webhookDeliveries(): Record<string, Schema> {
  const header = (name: string, description: string, schema: Schema, example: string): Schema => ({
    name,
    in: 'header',
    required: true,
    description,
    schema,
    example,
  });
  return {
    WebhookEvent: {
      post: {
        operationId: 'webhookEvent',
        summary: 'An event, POSTed to each of your endpoints that subscribes to its type',
        description:
          'Sent by the service to the `url` of each enabled endpoint (`POST /webhook/add-1.0`) whose `events` include the type, at least once: de-duplicate by `webhook-id`. Verify the signature before trusting the body (any Standard Webhooks library does). The body is `WebhookEvent`, told apart by `type`; the same bytes on every retry and replay.',
        tags: ['webhooks'],
        security: [],
        parameters: [
          header(
            'webhook-id',
            'The event id: the same on every retry and replay, and for every endpoint that gets the event',
            { type: 'string', pattern: '^evt_[0-9a-f]{32}$' },
            'evt_0f1e2d3c4b5a69788796a5b4c3d2e1f0',
          ),
          header(
            'webhook-timestamp',
            'Unix seconds of this attempt (reject old ones: the libraries allow 5 minutes)',
            { type: 'string', pattern: '^[0-9]+$' },
            '1795431520',
          ),
          header(
            'webhook-signature',
            'Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the base64-decoded secret after `whsec_`; two for 24 h after a rotation (either one matching is enough)',
            { type: 'string' },
            'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
          ),
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/WebhookEvent' },
              examples: examplesOf(webhookEventExamples, false),
            },
          },
        },
        responses: {
          '2XX': { description: 'Any 2xx answer: delivered' },
          '410': { description: 'Gone: the endpoint is disabled and gets nothing more' },
          default: {
            description:
              'Anything else (3xx included: redirects are not followed), or no complete answer within 15 s: retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h',
          },
        },
      },
    },
  };
}

export function buildOpenApi(): Schema {
  const { version } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  const components: Record<string, Schema> = {};
  const paths: Record<string, Record<string, Schema>> = {};
  for (const route of routes) {
    const item = paths[route.path] ?? {};
    item[route.method.toLowerCase()] = operation(route, components);
    paths[route.path] = item;
  }
  addWebhookEventComponents(components);
  const codes = Object.keys(catalogue).map(Number) as ErrorCode[];
  const codeTable = codes
    .map((code) => `| ${code} | ${catalogue[code].status} | ${catalogue[code].message} |`)
    .join('\n');
  return {
    openapi: '3.0.3',
    info: {
      title: 'svc-mail',
      version,
      description: `Transactional e-mail API. Every JSON response is \`{"data": …}\` on success or \`{"error": {"code", "message", "details"}}\` on failure, with the HTTP status the error catalogue gives for the code; every response carries \`x-request-id\`. Each operation lists, per HTTP status, the codes it can answer.\n\nWebhook deliveries (signed POSTs to your endpoints, Standard Webhooks v1) are in \`x-webhooks\`; their bodies are the \`WebhookEvent\` schema (\`MessageEvent\`, \`MessageCancelledEvent\`, \`InboundReceivedEvent\`, \`WebhookDisabledEvent\`, told apart by \`type\`).\n\n| Code | HTTP | Meaning |\n|---|---|---|\n${codeTable}`,
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    servers: [{ url: 'http://127.0.0.1:3000', description: 'Local host (`npm start`)' }],
    tags: [
      { name: 'messages', description: 'Sending, querying and deleting messages' },
      { name: 'stats', description: 'Counts of your messages by status, hour or day, domain or tag' },
      { name: 'domains', description: 'DKIM settings of sending domains' },
      { name: 'avatars', description: 'Avatar lookup and housekeeping' },
      { name: 'service', description: 'Health, keepalive and this document' },
      { name: 'suppressions', description: 'Your suppression list: addresses that are never mailed' },
      {
        name: 'webhooks',
        description:
          'Signed delivery events (Standard Webhooks v1) to your endpoints; their bodies are the `WebhookEvent` schema (`x-webhooks`)',
      },
      { name: 'templates', description: 'Versioned Handlebars templates and their preview' },
      { name: 'inbound', description: 'Mail received by your receiving domains' },
      { name: 'apikeys', description: 'API keys of your account, and what a credential may do (whoami)' },
      {
        name: 'streams',
        description:
          'The one-click unsubscribe of broadcast mail (RFC 8058): public links in the mail itself',
      },
    ],
    paths,
    'x-gateway-responses': gatewayResponses(),
    'x-webhooks': webhookDeliveries(),
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: `A JWT from the configured OpenID Connect provider (issuer, audience and keys set by AUTH_ISSUER, AUTH_AUDIENCE, AUTH_JWKS_URL). Access rights are OAuth scopes in the \`scope\` string or \`scp\` array; each operation lists its own in \`x-scopes\`:\n${Object.entries(
            scopes,
          )
            .map(([scope, text]) => `- \`${scope}\`: ${text}`)
            .join('\n')}`,
        },
      },
      schemas: {
        ...components,
        ErrorDetail: {
          type: 'object',
          required: ['field', 'message'],
          properties: {
            field: { type: 'string', description: 'Path of the field, e.g. `to[1]`', example: 'to[1]' },
            message: { type: 'string' },
          },
          additionalProperties: false,
        },
      },
    },
  };
}

export function renderOpenApi(): string {
  return `${JSON.stringify(buildOpenApi(), null, 2)}\n`;
}

/**
 * The TypeScript types of the document (openapi-typescript), for the typed client in clients/.
 * Imported only here, so nothing else pays for the TypeScript compiler it loads.
 */
export async function renderClientTypes(document: Schema = buildOpenApi()): Promise<string> {
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  // openapi-typescript edits the document it is given (the discriminator's members: their `type`
  // enums), so it gets a copy: the caller's document (the committed one, in the test) stays as it is.
  const ast = await openapiTS(structuredClone(document) as never, { alphabetize: false, exportType: false });
  return `/*\n * Generated by \`npm run openapi\` from docs/openapi.json (openapi-typescript). Do not edit.\n * A test fails when it is stale.\n */\n\n${astToString(ast)}`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(documentPath, renderOpenApi());
  process.stdout.write(`wrote ${documentPath}\n`);
  mkdirSync(dirname(clientTypesPath), { recursive: true });
  writeFileSync(clientTypesPath, await renderClientTypes());
  process.stdout.write(`wrote ${clientTypesPath}\n`);
}
