import type { MiddlewareObj } from '@middy/core';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';

/** Reads `?dry_run=true|false`; on a route that does not support it, a dry run is refused with 114. */
export function isDryRun(event: ApiEvent): boolean {
  const value = event.queryStringParameters?.dry_run;
  return value !== undefined && value !== null && value.toLowerCase() !== 'false' && value !== '0';
}

export function dryRunGuard(supported: boolean): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'dryRunGuard',
    before: ({ event }) => {
      if (!supported && isDryRun(event)) throw new ServiceError(Code.DryRunNotAllowed);
    },
  };
}
