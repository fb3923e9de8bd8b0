import { Code } from '../errors/catalogue.ts';
import { isServiceError, ServiceError } from '../errors/service-error.ts';
import { describeError, log } from '../observability/log.ts';

export type Store = 'database' | 'object storage' | 'queue';

const missingResource = new Set([
  'ResourceNotFoundException',
  'NoSuchBucket',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
]);
const unavailable = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'SlowDown',
  'TimeoutError',
  'RequestTimeout',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

function errorName(error: unknown): string {
  if (typeof error !== 'object' || error === null) return '';
  const { name, code, Code: upperCode } = error as { name?: string; code?: string; Code?: string };
  return code ?? upperCode ?? name ?? '';
}

/**
 * Maps an infrastructure failure to the catalogue: a missing table/queue/bucket → 3, an
 * unreachable or throttled store after the SDK's retries → 4, a failed transaction → 5, a request
 * the database refuses as invalid (DynamoDB `ValidationException`, e.g. an item over 400 KB) → 111,
 * logged.
 * Anything else is rethrown untouched and becomes code 2.
 */
export function toServiceFault(error: unknown, store: Store): unknown {
  if (isServiceError(error)) return error;
  const name = errorName(error);
  const causeName = errorName((error as { cause?: unknown })?.cause);
  if (missingResource.has(name)) {
    return new ServiceError(Code.DatabaseNotConfigured, `The ${store} is not configured`, { cause: error });
  }
  if (name === 'TransactionCanceledException' || name === 'TransactionConflictException') {
    return new ServiceError(Code.CommitFailed, `The ${store} could not commit the change; retry`, {
      cause: error,
    });
  }
  if (name === 'ValidationException' && store === 'database') {
    // The request passed validation but the database refused the write or read (an item over
    // 400 KB, an expression over its limits). Size bounds at the API make this unexpected: log it
    // for the operator, and answer 111 (not 2): the request as given cannot be carried out, and a
    // retry of the same request would fail the same way.
    log('error', 'database refused a request as invalid', { store, ...describeError(error) });
    return new ServiceError(
      Code.MethodValidation,
      'The database refused this change as too large or invalid; nothing was changed',
      { cause: error },
    );
  }
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  if (unavailable.has(name) || unavailable.has(causeName) || (status !== undefined && status >= 500)) {
    return new ServiceError(Code.DatabaseUnavailable, `The ${store} is unavailable; retry later`, {
      cause: error,
    });
  }
  return error;
}

/** Runs a store call and translates its infrastructure faults. */
export async function guarded<T>(store: Store, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toServiceFault(error, store);
  }
}
