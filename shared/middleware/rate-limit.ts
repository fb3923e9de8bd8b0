import { createHash } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import { httpConfig } from '../config/http.ts';
import { TokenBuckets } from '../domain/token-bucket.ts';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';

const buckets = new TokenBuckets(httpConfig.rateLimitRps, httpConfig.rateLimitBurst);

/** The bucket key: a hash of the bearer token when there is one, else the caller's address. */
export function rateLimitKey(authorization: string | undefined, sourceIp: string): string {
  if (authorization !== undefined && authorization.trim() !== '') {
    return `token:${createHash('sha256').update(authorization.trim()).digest('base64url').slice(0, 22)}`;
  }
  return `ip:${sourceIp}`;
}

/**
 * Per-caller token bucket (`RATE_LIMIT_RPS`, `RATE_LIMIT_BURST`). On AWS the WAF rate rule and
 * stage throttling stand in front of this; here it protects each function instance as well.
 */
export function rateLimit(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'rateLimit',
    before: ({ event, context }) => {
      const key = rateLimitKey(event.headers.authorization, context.sourceIp);
      const decision = buckets.take(key, Date.now());
      context.rateLimitHeaders = {
        'ratelimit-limit': String(decision.limit),
        'ratelimit-remaining': String(decision.remaining),
        'ratelimit-reset': String(decision.resetSeconds),
      };
      if (!decision.allowed) {
        throw new ServiceError(Code.TooManyRequests, undefined, {
          headers: { 'retry-after': String(decision.retryAfterSeconds) },
        });
      }
    },
  };
}
