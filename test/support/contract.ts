import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { ApiResponse } from './host.ts';

/**
 * Checks a response against the committed OpenAPI document (docs/openapi.json): the status must be
 * documented for the operation and the body must match its schema. Use it on every response a test
 * sees, so the document and the service cannot drift apart.
 */
const documentFile = join(import.meta.dirname, '..', '..', 'docs', 'openapi.json');
const document = JSON.parse(readFileSync(documentFile, 'utf8')) as {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
addFormats.default(ajv);
ajv.addSchema(document, 'openapi.json');
const validators = new Map<string, ValidateFunction>();

const pointer = (...parts: string[]) =>
  parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

export function openApiProblems(method: string, path: string, response: ApiResponse): string[] {
  const operation = document.paths[path]?.[method.toLowerCase()];
  if (operation === undefined) return [`${method} ${path} is not in docs/openapi.json`];
  const status = String(response.status);
  if (operation.responses[status] === undefined)
    return [`${method} ${path}: status ${status} is not documented`];
  const key = pointer(
    'paths',
    path,
    method.toLowerCase(),
    'responses',
    status,
    'content',
    'application/json',
    'schema',
  );
  let validate = validators.get(key);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `openapi.json#/${key}` });
    validators.set(key, validate);
  }
  if (validate(response.body)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '(body)'} ${error.message ?? ''}`);
}
