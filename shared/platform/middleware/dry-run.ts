import type { MiddlewareObj } from '@middy/core';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';

/** The values `?dry_run=` takes; any other is refused, so `dry_run=no` never silently runs dry. */
export const dryRunValues = ['true', 'false', '1', '0'] as const;

function dryRunValue(event: ApiEvent): string | undefined {
  return event.queryStringParameters?.dry_run ?? undefined;
}

/** Reads `?dry_run=true|1` (true) or `false|0` (false); the guard below has refused any other value. */
export function isDryRun(event: ApiEvent): boolean {
  const value = dryRunValue(event);
  return value === 'true' || value === '1';
}

/** 107 for a value outside `dryRunValues`; 114 for a dry run on a route that does not support it. */
export function dryRunGuard(supported: boolean): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'dryRunGuard',
    before: ({ event }) => {
      const value = dryRunValue(event);
      if (value !== undefined && !(dryRunValues as readonly string[]).includes(value)) {
        throw new ServiceError(Code.InvalidInput, undefined, {
          details: [
            {
              field: '?dry_run',
              message: `dry_run is one of ${dryRunValues.join(', ')}; got "${value.slice(0, 100)}"`,
            },
          ],
        });
      }
      if (!supported && isDryRun(event)) throw new ServiceError(Code.DryRunNotAllowed);
    },
  };
}
