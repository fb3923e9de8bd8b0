import type { MiddlewareObj } from '@middy/core';
import { type $ZodIssue, type $ZodType, safeParse } from 'zod/v4/core';
import { Code, catalogue, type ErrorCode } from '../errors/catalogue.ts';
import { type ErrorDetail, ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';
import { type UnknownFieldHint, unknownFieldHint } from '../schemas/field-hints.ts';

export type InputSource = 'body' | 'query';

/** A JSONPath-like field name for a detail: `to[1]`, `attachments[0].filename`. */
export function fieldName(path: readonly PropertyKey[]): string {
  let name = '';
  for (const part of path) {
    if (typeof part === 'number') name += `[${part}]`;
    else name += name === '' ? String(part) : `.${String(part)}`;
  }
  return name === '' ? '(body)' : name;
}

export function isEmailIssue(issue: $ZodIssue): boolean {
  if (issue.code === 'invalid_format' && issue.format === 'email') return true;
  return (
    issue.code === 'custom' &&
    (issue.params as { catalogueCode?: number } | undefined)?.catalogueCode === Code.InvalidEmail
  );
}

/** The catalogue code a custom issue asks for (`params: { catalogueCode }`), if it names one. */
function requestedCode(issue: $ZodIssue): ErrorCode | undefined {
  if (issue.code !== 'custom') return undefined;
  const code = (issue.params as { catalogueCode?: number } | undefined)?.catalogueCode;
  return code !== undefined && code in catalogue ? (code as ErrorCode) : undefined;
}

/**
 * Turns schema issues into one catalogue error: 10000001 when any address is invalid, else the code
 * a custom issue asks for (e.g. 10010001 for an avatar size), else 107. Details list every issue.
 */
export function validationError(
  issues: readonly $ZodIssue[],
  input?: unknown,
  hint?: UnknownFieldHint,
): ServiceError {
  const reported = issues.flatMap(shapeMatchedBranch);
  const details: ErrorDetail[] = reported.flatMap((issue): ErrorDetail[] => {
    // Strict input: one detail per unknown field, named with its full path (a typo such as
    // `schedule` for `scheduling` must be refused, never silently dropped). A top-level field the
    // schema has a hint for says where it goes instead.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => {
        const advice =
          hint !== undefined && issue.path.length === 0 && isObject(input)
            ? hint(key, input as Record<string, unknown>)
            : undefined;
        const unknown = `Unknown field "${key.slice(0, 100)}"`;
        return {
          field: fieldName([...issue.path, key]),
          message: advice === undefined ? unknown : `${unknown}: ${advice}`,
        };
      });
    }
    if (
      (issue.code === 'invalid_type' || issue.code === 'invalid_value' || issue.code === 'invalid_union') &&
      input !== undefined &&
      isMissing(input, issue.path)
    ) {
      return [{ field: fieldName(issue.path), message: `${fieldName(issue.path)} is required` }];
    }
    return [{ field: fieldName(issue.path), message: issue.message }];
  });
  const code = reported.some(isEmailIssue)
    ? Code.InvalidEmail
    : (reported.map(requestedCode).find((candidate) => candidate !== undefined) ?? Code.InvalidInput);
  return new ServiceError(code, undefined, { details });
}

/**
 * A failed union whose input had the shape of exactly one branch (e.g. one address where a list or
 * an address is accepted) is reported by that branch's own issues, which say what is wrong with it
 * (and carry its catalogue code), instead of "none of the alternatives".
 */
function shapeMatchedBranch(issue: $ZodIssue): $ZodIssue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length < 2) return [issue];
  const shaped = issue.errors.filter((branch) => !branch.every(isShapeMismatch));
  if (shaped.length !== 1) return [issue];
  return (shaped[0] as $ZodIssue[]).map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
}

/** An issue that only says the input has another type (also: none of a union's types). */
function isShapeMismatch(issue: $ZodIssue): boolean {
  if (issue.path.length > 0) return false;
  if (issue.code === 'invalid_type') return true;
  return (
    issue.code === 'invalid_union' &&
    issue.errors.length > 0 &&
    issue.errors.every((branch) => branch.every(isShapeMismatch))
  );
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when the field at `path` is absent from an object that exists (a missing required field). */
function isMissing(input: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return input === undefined;
  let parent: unknown = input;
  for (const part of path.slice(0, -1)) {
    if (parent === null || typeof parent !== 'object') return false;
    parent = (parent as Record<PropertyKey, unknown>)[part];
  }
  if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) return false;
  return (parent as Record<PropertyKey, unknown>)[path[path.length - 1] as PropertyKey] === undefined;
}

/**
 * The one field the interface accepts and ignores: `tenant_id` (the tenant comes from
 * `message_sender`). It is removed before strict validation, from bodies and query strings alike.
 */
export const ignoredField = 'tenant_id';

/** A body without its top-level `tenant_id` (the same value when it has none). */
export function withoutIgnoredFields(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !(ignoredField in body))
    return body;
  const { [ignoredField]: _ignored, ...rest } = body as Record<string, unknown>;
  return rest;
}

function queryInput(event: ApiEvent): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (name !== 'dry_run' && name !== ignoredField && value !== undefined && value !== null)
      query[name] = value;
  }
  return query;
}

/**
 * Checks `raw` against `schema` synchronously: its value, or the catalogue error (107, 10000001, or 9
 * when a check itself throws; 107 when it runs out of stack or memory). Never zod's Standard Schema `validate`, which retries a throwing
 * check asynchronously and so rejects outside the caller's try.
 */
export function checkInput<T>(schema: $ZodType<T>, raw: unknown): { value: T } | { error: ServiceError } {
  let result: ReturnType<typeof safeParse<$ZodType<T>>>;
  try {
    result = safeParse(schema, raw);
  } catch (error) {
    // Input that exhausts the stack or memory of a check is too large or too deep: the caller's to fix.
    if (error instanceof RangeError) {
      return {
        error: new ServiceError(Code.InvalidInput, undefined, {
          details: [
            { field: '(body)', message: 'Too deeply nested or too large to check; send a smaller input' },
          ],
        }),
      };
    }
    return { error: new ServiceError(Code.ValidatorFailed, undefined, { cause: error }) };
  }
  return result.success
    ? { value: result.data }
    : { error: validationError(result.error.issues, raw, unknownFieldHint(schema)) };
}

/** Validates the JSON body or the query string against the route's schema; the result is `event.input`. */
export function validateInput(
  schema: $ZodType,
  source: InputSource,
): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'validateInput',
    before: ({ event }) => {
      if (source === 'body') {
        event.jsonBody = withoutIgnoredFields(event.jsonBody);
        // A body route reads nothing from the query string but `dry_run`: anything else is a mistake.
        const unknown = Object.keys(queryInput(event));
        if (unknown.length > 0) {
          throw new ServiceError(Code.InvalidInput, undefined, {
            details: unknown.map((name) => ({
              field: `?${name.slice(0, 100)}`,
              message: `Unknown query parameter "${name.slice(0, 100)}"; send fields in the JSON body`,
            })),
          });
        }
      }
      const raw = source === 'body' ? event.jsonBody : queryInput(event);
      const checked = checkInput(schema, raw);
      if ('error' in checked) throw checked.error;
      event.input = checked.value;
    },
  };
}
