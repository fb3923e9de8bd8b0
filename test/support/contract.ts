import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { matchRoutePath } from '../../shared/platform/http/route.ts';

/**
 * Checks a response against the committed OpenAPI document (docs/openapi.json): the status must be
 * documented for the operation, the documented headers marked by the generator as always present
 * (`x-request-id`) must be there, and the body must match the response's schema (or be empty when
 * the response has no content). Requests outside the operations (unknown path, other method, CORS
 * preflight) must get the gateway answers of `x-gateway-responses`.
 *
 * `call()` (test/support/host.ts) runs this on every response and fails the test on any problem,
 * so the document and the service cannot drift apart.
 */
export interface CheckedResponse {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

interface ResponseObject {
  content?: Record<string, { schema: unknown }>;
  headers?: Record<string, unknown>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  'x-gateway-responses': Record<string, { status: number; response: ResponseObject }>;
  components?: {
    schemas?: Record<string, { discriminator?: { propertyName: string; mapping?: Record<string, string> } }>;
  };
}

const documentFile = join(import.meta.dirname, '..', '..', 'docs', 'openapi.json');

/** A validator for one document (the committed one by default; tests of the validator pass their own). */
export function contractChecker(document: OpenApiDocument) {
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi.json');
  const validators = new Map<string, ValidateFunction>();
  const pointer = (...parts: string[]) =>
    parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

  function check(
    where: string[],
    expected: ResponseObject,
    response: CheckedResponse,
    label: string,
  ): string[] {
    const problems: string[] = [];
    if (expected.headers?.['x-request-id'] !== undefined && !response.headers.get('x-request-id'))
      problems.push(`${label}: header x-request-id is missing`);
    if (expected.content?.['text/html'] !== undefined) {
      const type = response.headers.get('content-type') ?? '';
      if (!type.startsWith('text/html'))
        problems.push(`${label}: content-type ${type || '(none)'}, not HTML`);
      return problems;
    }
    const media = expected.content?.['application/json'];
    // A documented non-JSON body (the tracking pixel, the neutral 404 page): its media type is checked.
    const other = Object.keys(expected.content ?? {}).find((type) => type !== 'application/json');
    if (media === undefined && other !== undefined) {
      const type = response.headers.get('content-type') ?? '';
      if (!type.startsWith(other)) problems.push(`${label}: content-type ${type}, documented ${other}`);
      return problems;
    }
    if (media === undefined) {
      if (response.text !== '')
        problems.push(`${label}: documented without a body, got ${response.text.slice(0, 80)}`);
      return problems;
    }
    const type = response.headers.get('content-type') ?? '';
    if (!type.startsWith('application/json'))
      problems.push(`${label}: content-type ${type || '(none)'}, not JSON`);
    const key = pointer(...where, 'content', 'application/json', 'schema');
    let validate = validators.get(key);
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `openapi.json#/${key}` });
      validators.set(key, validate);
    }
    if (!validate(response.body)) {
      for (const error of validate.errors ?? []) {
        const extra =
          error.params && Object.keys(error.params).length > 0 ? ` ${JSON.stringify(error.params)}` : '';
        problems.push(`${label}: ${error.instancePath || '(body)'} ${error.message ?? ''}${extra}`);
      }
    }
    return problems;
  }

  /** Problems of one response to `method path` (path without the query string); [] when it conforms. */
  return function problems(method: string, requestPath: string, response: CheckedResponse): string[] {
    let path = requestPath;
    const lower = method.toLowerCase();
    // A path with `{name}` segments (the unsubscribe and tracking links) is documented by its template.
    if (document.paths[path] === undefined) {
      const template = Object.keys(document.paths).find((candidate) => matchRoutePath(candidate, path));
      if (template !== undefined) path = template;
    }
    const item = document.paths[path];
    const operation = item?.[lower];
    const label = `${method} ${path} → ${response.status}`;
    if (operation === undefined) {
      const kind =
        item === undefined ? 'unknown-path' : lower === 'options' ? 'preflight' : 'method-not-allowed';
      const gateway = document['x-gateway-responses'][kind];
      if (gateway === undefined) return [`${label}: no gateway answer '${kind}' in the document`];
      if (response.status !== gateway.status)
        return [
          `${label}: ${method} ${path} is not an operation; the gateway answers ${gateway.status} (${kind})`,
        ];
      return check(['x-gateway-responses', kind, 'response'], gateway.response, response, label);
    }
    const status = String(response.status);
    const expected = operation.responses[status];
    if (expected === undefined)
      return [
        `${label}: status ${status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`,
      ];
    return check(['paths', path, lower, 'responses', status], expected, response, label);
  };
}

/**
 * A validator of webhook delivery bodies against the document's `WebhookEvent` component (the union
 * of every event body, shared/webhooks/event-schemas.ts). When a body fails, the problems are those of
 * the member its `type` maps to (the discriminator), which name the field, rather than the union's.
 */
export function webhookEventChecker(document: OpenApiDocument) {
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi.json');
  const union = ajv.compile({ $ref: 'openapi.json#/components/schemas/WebhookEvent' });
  const discriminator = document.components?.schemas?.WebhookEvent?.discriminator;
  const members = new Map<string, ValidateFunction>();
  const describe = (label: string, validate: ValidateFunction) =>
    (validate.errors ?? []).map((error) => {
      const extra =
        error.params && Object.keys(error.params).length > 0 ? ` ${JSON.stringify(error.params)}` : '';
      return `${label}: ${error.instancePath || '(body)'} ${error.message ?? ''}${extra}`;
    });

  /** Problems of one body (the parsed JSON, or the raw text when it is not JSON); [] when it conforms. */
  return function problems(body: unknown): string[] {
    if (union(body)) return [];
    const type = (body as { type?: unknown } | null)?.type;
    const reference = typeof type === 'string' ? discriminator?.mapping?.[type] : undefined;
    if (reference === undefined)
      return [`WebhookEvent: type ${JSON.stringify(type)} is none of the documented event types`];
    let member = members.get(reference);
    if (member === undefined) {
      member = ajv.compile({ $ref: `openapi.json${reference}` });
      members.set(reference, member);
    }
    const label = `${String(type)} (${reference.replace('#/components/schemas/', '')})`;
    return member(body) ? describe('WebhookEvent', union) : describe(label, member);
  };
}

let committed: ReturnType<typeof contractChecker> | undefined;
let committedEvents: ReturnType<typeof webhookEventChecker> | undefined;

function committedDocument(): OpenApiDocument {
  return JSON.parse(readFileSync(documentFile, 'utf8')) as OpenApiDocument;
}

/** Problems of a response against the committed docs/openapi.json. */
export function openApiProblems(method: string, path: string, response: CheckedResponse): string[] {
  committed ??= contractChecker(committedDocument());
  return committed(method, new URL(path, 'http://localhost').pathname, response);
}

/**
 * Problems of a webhook delivery body (its text, as received) against `WebhookEvent` in the
 * committed docs/openapi.json; the webhook receiver of the tests runs it on every request.
 */
export function webhookEventProblems(text: string): string[] {
  committedEvents ??= webhookEventChecker(committedDocument());
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [`WebhookEvent: the body is not JSON: ${text.slice(0, 80)}`];
  }
  return committedEvents(body);
}
