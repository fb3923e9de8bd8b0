import { catalogue, type ErrorCode } from './catalogue.ts';

export interface ErrorDetail {
  field: string;
  message: string;
}

export interface ServiceErrorOptions {
  details?: ErrorDetail[];
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * An error that the caller is meant to see: it carries a catalogue code, a safe message and optional
 * field details. Anything thrown that is not a ServiceError is answered as code 2 without internals.
 */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, options: ServiceErrorOptions = {}) {
    super(message ?? catalogue[code].message, { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return catalogue[this.code].status;
  }
}

export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof ServiceError;
}
