import type { MiddlewareObj } from '@middy/core';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';

/** 113 unless the caller's token carries every scope the route requires. */
export function requireScopes(
  required: readonly string[],
): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'requireScopes',
    before: ({ context }) => {
      const missing = required.filter((scope) => !context.caller?.scopes.has(scope));
      if (missing.length > 0) {
        throw new ServiceError(Code.AccessDenied, `Token lacks the scope ${missing.join(', ')}`);
      }
    },
  };
}
