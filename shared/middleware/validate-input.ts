import type { MiddlewareObj } from '@middy/core';
import type { $ZodIssue, $ZodType } from 'zod/v4/core';
import { Code, catalogue, type ErrorCode } from '../errors/catalogue.ts';
import { type ErrorDetail, ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';

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
export function validationError(issues: readonly $ZodIssue[]): ServiceError {
  const details: ErrorDetail[] = issues.map((issue) => ({
    field: fieldName(issue.path),
    message: issue.message,
  }));
  const code = issues.some(isEmailIssue)
    ? Code.InvalidEmail
    : (issues.map(requestedCode).find((candidate) => candidate !== undefined) ?? Code.InvalidInput);
  return new ServiceError(code, undefined, { details });
}

function queryInput(event: ApiEvent): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (name !== 'dry_run' && value !== undefined && value !== null) query[name] = value;
  }
  return query;
}

/** Validates the JSON body or the query string against the route's schema; the result is `event.input`. */
export function validateInput(
  schema: $ZodType,
  source: InputSource,
): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'validateInput',
    before: ({ event }) => {
      const raw = source === 'body' ? event.jsonBody : queryInput(event);
      let result: ReturnType<$ZodType['~standard']['validate']>;
      try {
        result = schema['~standard'].validate(raw);
      } catch (error) {
        throw new ServiceError(Code.ValidatorFailed, undefined, { cause: error });
      }
      if (result instanceof Promise) throw new ServiceError(Code.ValidatorFailed, 'Asynchronous schema');
      if (result.issues !== undefined) {
        throw validationError(result.issues as unknown as $ZodIssue[]);
      }
      event.input = result.value;
    },
  };
}
