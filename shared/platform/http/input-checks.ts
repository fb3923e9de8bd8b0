import type { MiddlewareObj } from '@middy/core';
import { jsonBody } from '../middleware/json-body.ts';
import { validateInput } from '../middleware/validate-input.ts';
import type { ApiContext, ApiEvent, ApiResult } from './api-types.ts';
import type { InputOption } from './chain.ts';

/**
 * The chain's input steps, JSON body then validation, for a route that takes input. Kept out of
 * chain.ts so that the public functions, which take none, bundle neither them nor zod.
 */
export function inputChecks<TInput>(
  input: InputOption<TInput> | undefined,
): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext>[] {
  if (input === undefined) return [];
  const validation = validateInput(input.schema as never, input.from);
  return input.from === 'body' ? [jsonBody(), validation] : [validation];
}
