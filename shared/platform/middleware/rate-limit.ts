import type { MiddlewareObj } from '@middy/core';
import { httpConfig } from '../config/http.ts';
import { Code } from '../errors/catalogue.ts';
import { isServiceError, ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult, Caller } from '../http/api-types.ts';
import { stricterOf } from '../rate-limit/message-budget.ts';
import { type BucketDecision, TokenBuckets } from '../rate-limit/token-bucket.ts';

type Middleware = MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext>;

/*
 * Two kinds of buckets (`RATE_LIMIT_RPS`, `RATE_LIMIT_BURST` each), in two separate maps:
 * - per source address: requests without a token, requests to public routes, and every request
 *   whose token fails verification (104, 105, 110);
 * - per verified caller: the account for a JWT, the key id for an API key (so one key cannot
 *   spend another's budget), for requests whose credential verified;
 * - besides, per API key with its own `rate_limit_rps`: that rate (and as much burst).
 * So nothing a caller makes up picks its bucket: a new random token per request is a failed
 * authentication, charged to the sender's address, and can neither escape the limit nor create
 * entries that push real callers' buckets out of the account map.
 */
const addressBuckets = new TokenBuckets(httpConfig.rateLimitRps, httpConfig.rateLimitBurst);
const accountBuckets = new TokenBuckets(httpConfig.rateLimitRps, httpConfig.rateLimitBurst);

const authFailures: ReadonlySet<number> = new Set([
  Code.AuthorizationMissing,
  Code.TokenExpired,
  Code.TokenInvalid,
]);

/** The bucket key of a request that did not (or could not) prove an account. */
export function addressKey(sourceIp: string): string {
  return `ip:${sourceIp}`;
}

export function accountKey(account: string): string {
  return `account:${account}`;
}

export function apiKeyKey(keyId: string): string {
  return `key:${keyId}`;
}

/** The bucket of a verified caller: its API key's, or its account's for a JWT. */
export function callerKey(caller: Caller): string {
  return caller.keyId === undefined ? accountKey(caller.account) : apiKeyKey(caller.keyId);
}

/** Buckets of keys with their own rate, one map per rate (keys share a few common rates). */
const ownRateBuckets = new Map<number, TokenBuckets>();

function ownRateOf(rate: number): TokenBuckets {
  let buckets = ownRateBuckets.get(rate);
  if (buckets === undefined) {
    buckets = new TokenBuckets(rate, Math.max(1, rate));
    ownRateBuckets.set(rate, buckets);
  }
  return buckets;
}

function hasAuthorization(event: ApiEvent): boolean {
  const header = event.headers.authorization;
  return header !== undefined && header.trim() !== '';
}

/** The last answer the headers of a request were set from, to tighten with the account's budget. */
const answered = new WeakMap<ApiContext, BucketDecision>();

function setHeaders(context: ApiContext, decision: BucketDecision): void {
  answered.set(context, decision);
  context.rateLimitHeaders = {
    'ratelimit-limit': String(decision.limit),
    'ratelimit-remaining': String(decision.remaining),
    'ratelimit-reset': String(decision.resetSeconds),
  };
}

function verdict(context: ApiContext, decision: BucketDecision): ServiceError | undefined {
  setHeaders(context, decision);
  if (decision.allowed) return undefined;
  return new ServiceError(Code.TooManyRequests, undefined, {
    headers: { 'retry-after': String(decision.retryAfterSeconds) },
  });
}

function charge(buckets: TokenBuckets, key: string, context: ApiContext): ServiceError | undefined {
  return verdict(context, buckets.take(key, Date.now()));
}

/**
 * Before authentication: a request with nothing to verify (no token, or a public route) is charged
 * to its address at once. A request with a token waits for the verdict: `accountRateLimit` charges
 * its account when the token verifies; when it does not, `onError` here charges the address and
 * answers 115 instead of the authentication error once that bucket is empty.
 * On AWS the WAF rate rules (per token, per address) stand in front of this; this protects each
 * function instance as well.
 */
export function rateLimit(options: { isPublic: boolean }): Middleware {
  const deferred = new WeakSet<ApiContext>();
  return {
    name: 'rateLimit',
    before: ({ event, context }) => {
      if (!options.isPublic && hasAuthorization(event)) {
        deferred.add(context);
        return;
      }
      const limited = charge(addressBuckets, addressKey(context.sourceIp), context);
      if (limited !== undefined) throw limited;
    },
    onError: (request) => {
      const { context, error } = request;
      if (!deferred.has(context) || context.caller !== undefined) return;
      if (!(isServiceError(error) && authFailures.has(error.code))) return;
      const limited = charge(addressBuckets, addressKey(context.sourceIp), context);
      if (limited !== undefined) request.error = limited;
    },
  };
}

/** After authentication: the verified caller's bucket, and an API key's own rate when it has one. */
export function accountRateLimit(): Middleware {
  return {
    name: 'accountRateLimit',
    before: ({ context }) => {
      const caller = context.caller;
      if (caller === undefined) return;
      const now = Date.now();
      const key = callerKey(caller);
      let decision = accountBuckets.take(key, now);
      if (caller.rateLimitRps !== undefined) {
        decision = stricterOf(decision, ownRateOf(caller.rateLimitRps).take(key, now));
      }
      const limited = verdict(context, decision);
      if (limited !== undefined) throw limited;
    },
  };
}

/**
 * Rate limits count messages, not requests (docs/decisions/0005-account-message-budget.md): a request that
 * carries `messages` messages (a batch) was admitted with the one token every request takes, and
 * pays here for the others, which may take the account's bucket into debt; its next requests wait
 * (115) until the refill has paid it back. A request without a verified account is not charged.
 */
export function chargeMessages(context: ApiContext, messages: number): void {
  if (context.caller === undefined || messages <= 1) return;
  const decision = accountBuckets.charge(callerKey(context.caller), messages - 1, Date.now());
  // A batch is charged here after the account's budget admitted it: the headers keep the stricter.
  const earlier = answered.get(context);
  setHeaders(context, earlier === undefined ? decision : stricterOf(decision, earlier));
}

/**
 * The answer of the account's budget shared by every instance (shared/platform/rate-limit/message-budget-store.ts,
 * charged by batches): the headers say the stricter of it and this instance's bucket, and a refusal
 * is the same 115, with `Retry-After`, as the bucket's.
 */
export function accountBudgetVerdict(
  context: ApiContext,
  decision: BucketDecision,
): ServiceError | undefined {
  const local = answered.get(context);
  return verdict(context, local === undefined ? decision : stricterOf(local, decision));
}
