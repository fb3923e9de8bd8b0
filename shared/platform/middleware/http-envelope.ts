import { randomUUID } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import { httpConfig } from '../config/http.ts';
import { Code } from '../errors/catalogue.ts';
import { isServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';
import { errorResponse } from '../http/envelope.ts';
import { describeError, log, recordLatency } from '../observability/log.ts';

export interface HttpEnvelopeOptions {
  routeKey: string;
  /** Public responses may be cached by intermediaries; authenticated ones never. */
  isPublic: boolean;
}

/**
 * First in the chain and last out: assigns the request id, adds the common headers to every
 * response, maps every error to the catalogue envelope, writes the one log line per request and
 * records the handler latency by route.
 */
export function httpEnvelope(
  options: HttpEnvelopeOptions,
): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  const finish = (request: {
    event: ApiEvent;
    context: ApiContext;
    response: ApiResult | null | undefined;
  }) => {
    const response = request.response as ApiResult;
    response.headers = { ...response.headers, ...commonHeaders(request.event, request.context, options) };
    let code: number | undefined;
    if (response.statusCode >= 400) {
      try {
        code = (JSON.parse(response.body) as { error?: { code?: number } }).error?.code;
      } catch {
        code = undefined;
      }
    }
    const latencyMs = Date.now() - request.context.startedAt;
    log('info', 'request', {
      requestId: request.context.requestId,
      route: options.routeKey,
      account: request.context.caller?.account,
      status: response.statusCode,
      code,
      latencyMs,
    });
    recordLatency(options.routeKey, latencyMs);
  };

  return {
    name: 'httpEnvelope',
    before: (request) => {
      const { event, context } = request;
      event.headers = lowerCaseKeys(event.headers);
      context.startedAt = Date.now();
      context.routeKey = options.routeKey;
      context.requestId = event.requestContext?.requestId || randomUUID();
      context.sourceIp = event.requestContext?.identity?.sourceIp ?? '';
    },
    after: (request) => finish(request),
    onError: (request) => {
      const error = request.error;
      if (isServiceError(error)) {
        request.response = errorResponse(error.code, error.message, error.details, error.headers);
      } else {
        log('error', 'unexpected error', { requestId: request.context.requestId, ...describeError(error) });
        request.response = errorResponse(
          Code.Internal,
          `Internal error; quote request id ${request.context.requestId ?? 'unknown'} to support`,
        );
      }
      finish(request);
    },
  };
}

function commonHeaders(
  event: ApiEvent,
  context: ApiContext,
  options: HttpEnvelopeOptions,
): Record<string, string> {
  const headers: Record<string, string> = {
    'x-request-id': context.requestId ?? '',
    'x-content-type-options': 'nosniff',
    ...corsHeaders(event.headers?.origin),
    ...context.rateLimitHeaders,
  };
  if (!options.isPublic) headers['cache-control'] = 'no-store';
  return headers;
}

/** CORS headers for the configured origins only. Shared with the gateway's OPTIONS answer. */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  const allowed = httpConfig.corsOrigins;
  const base = {
    'access-control-expose-headers':
      'x-request-id, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset',
  };
  if (allowed.includes('*')) return { 'access-control-allow-origin': '*', ...base };
  if (origin !== undefined && allowed.includes(origin)) {
    return { 'access-control-allow-origin': origin, vary: 'Origin', ...base };
  }
  return {};
}

function lowerCaseKeys(
  headers: Record<string, string | undefined> | null,
): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) result[name.toLowerCase()] = value;
  return result;
}
