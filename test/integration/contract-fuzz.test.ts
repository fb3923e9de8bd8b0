import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { type ApiResponse, call, mintToken, uniqueAccount } from '../support/host.ts';
import { invalidValue, type Schema, type SchemaDocument, validValue } from '../support/schema-arbitrary.ts';

/**
 * The contract fuzzer: for every operation of docs/openapi.json, requests generated from its own
 * schemas, valid and invalid (test/support/schema-arbitrary.ts), with a fixed seed and a bounded
 * number of cases, sent to the local host with a token that has every scope (a fresh account per
 * operation, so no case meets another's rate limit or data). Every answer must be outside 5xx and
 * match the document (status, headers, body), which `call()` checks for each response.
 * On a failure the message names the operation, the case and the request: replay it with `call()`.
 */
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Schema;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema } | undefined> };
}
type Document = SchemaDocument & { paths: Record<string, Record<string, Operation>> };

const document = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'openapi.json'), 'utf8'),
) as Document;

const seed = 20261128;
/** Per operation: enough to reach each branch of a body a few times, within the run's time budget. */
const validCases = 8;
const invalidCases = 8;

interface Case {
  kind: 'valid' | 'invalid';
  query: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  /** The content type of `rawBody` (JSON unless said). */
  contentType?: string;
}

const asQueryValue = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** The query parameters of an operation as one object schema (dry_run and headers aside). */
function querySchema(operation: Operation): Schema | undefined {
  const parameters = (operation.parameters ?? []).filter(
    (parameter) => parameter.in === 'query' && parameter.name !== 'dry_run',
  );
  if (parameters.length === 0) return undefined;
  return {
    type: 'object',
    properties: Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter.schema])),
    required: parameters
      .filter((parameter) => parameter.required === true)
      .map((parameter) => parameter.name),
    additionalProperties: false,
  };
}

function casesOf(operation: Operation, index: number): Case[] {
  const body = operation.requestBody?.content['application/json']?.schema;
  const form = operation.requestBody?.content['application/x-www-form-urlencoded']?.schema;
  const query = querySchema(operation);
  const dryRun = (operation.parameters ?? []).find((parameter) => parameter.name === 'dry_run');
  const options = (offset: number, numRuns: number) => ({ seed: seed + index * 100 + offset, numRuns });
  const cases: Case[] = [];
  if (body !== undefined) {
    for (const value of fc.sample(validValue(body, document), options(0, validCases)))
      cases.push({ kind: 'valid', query: dryRun === undefined ? {} : { dry_run: 'true' }, body: value });
    for (const value of fc.sample(invalidValue(body, document), options(1, invalidCases)))
      cases.push({ kind: 'invalid', query: {}, body: value });
    cases.push({ kind: 'invalid', query: {}, rawBody: '{"unterminated": ' });
  } else if (form !== undefined) {
    // A form (the one-click unsubscribe): the body as mail providers send it, and ones they never do.
    const contentType = 'application/x-www-form-urlencoded';
    cases.push({ kind: 'valid', query: {}, rawBody: 'List-Unsubscribe=One-Click', contentType });
    for (const rawBody of fc.sample(fc.string({ maxLength: 40 }), options(1, invalidCases)))
      cases.push({ kind: 'invalid', query: {}, rawBody, contentType });
  } else if (query !== undefined) {
    const toQuery = (value: unknown) =>
      Object.fromEntries(
        Object.entries(value !== null && typeof value === 'object' ? value : { value }).map(
          ([name, item]) => [name, asQueryValue(item)],
        ),
      );
    for (const value of fc.sample(validValue(query, document), options(0, validCases)))
      cases.push({ kind: 'valid', query: toQuery(value) });
    for (const value of fc.sample(invalidValue(query, document), options(1, invalidCases)))
      cases.push({ kind: 'invalid', query: toQuery(value) });
  } else {
    cases.push({ kind: 'valid', query: {} });
  }
  // `?dry_run=` takes true, false, 1 or 0 only, on every route.
  for (const value of fc.sample(
    fc.string({ maxLength: 6 }).filter((text) => !['true', 'false', '1', '0'].includes(text)),
    options(2, 2),
  ))
    cases.push({ kind: 'invalid', query: { dry_run: value }, ...(body === undefined ? {} : { body: {} }) });
  return cases;
}

function isClosedConnection(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } }).cause;
  return error instanceof TypeError && ['UND_ERR_SOCKET', 'ECONNRESET'].includes(cause?.code ?? '');
}

const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
);

describe('contract fuzzer: generated requests for every operation of docs/openapi.json', () => {
  it.each(operations.map((entry, index) => ({ ...entry, index, name: `${entry.method} ${entry.path}` })))(
    '$name: no 5xx, every answer as documented',
    { timeout: 120_000 },
    async ({ path, method, operation, index }) => {
      const token = await mintToken({ account: uniqueAccount('fuzz') });
      for (const [number, request] of casesOf(operation, index).entries()) {
        const label =
          `${method} ${path} case ${number} (${request.kind}): ?${new URLSearchParams(request.query)} ${
            request.rawBody ?? JSON.stringify(request.body) ?? ''
          }`.slice(0, 2000);
        // A path parameter (a tracking token) as a mail client would send one it made up.
        const filled = path.replace(/\{\w+\}/g, `fuzz-${number}`);
        const send = () =>
          call(method, filled, {
            token,
            query: request.query,
            ...(request.body === undefined ? {} : { body: request.body }),
            ...(request.rawBody === undefined
              ? {}
              : {
                  rawBody: request.rawBody,
                  headers: { 'content-type': request.contentType ?? 'application/json' },
                }),
          });
        let response: ApiResponse;
        try {
          response = await send().catch((error: unknown) => {
            // A kept-alive connection the server closed just as it was reused: once more on a new
            // one. A host that went down refuses the second attempt too.
            if (!isClosedConnection(error)) throw error;
            return send();
          });
        } catch (error) {
          const cause = (error as { cause?: unknown }).cause;
          throw new Error(
            `${label}\n${error instanceof Error ? error.message : String(error)} ${String(cause ?? '')}`,
          );
        }
        assert.ok(response.status < 500, `${label}\n→ ${response.status} ${response.text.slice(0, 500)}`);
        if (request.kind === 'invalid' && request.query.dry_run !== undefined)
          assert.equal(response.status, 406, `${label}\n→ ${response.status} ${response.text.slice(0, 500)}`);
      }
    },
  );
});
