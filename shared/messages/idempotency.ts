import { createHash } from 'node:crypto';
import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import type { IdempotencyClaim, StoredResponse } from './store/messages.ts';

/** How long a key is remembered: 24 hours, then DynamoDB TTL removes the record. */
export const idempotencyLifetimeSeconds = 24 * 3600;

const keyShape = /^[\x21-\x7e]{1,255}$/;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** A hash of the request body that ignores key order and whitespace. */
export function bodyHash(body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(body)))
    .digest('base64url');
}

/** The claim for an `Idempotency-Key` header, or undefined without one; a malformed key is 107. */
export function idempotencyClaim(
  header: string | undefined,
  body: unknown,
  now: Date,
): IdempotencyClaim | undefined {
  if (header === undefined) return undefined;
  const key = header.trim();
  if (!keyShape.test(key)) {
    throw new ServiceError(Code.InvalidInput, undefined, {
      details: [{ field: 'Idempotency-Key', message: 'Must be 1 to 255 printable ASCII characters' }],
    });
  }
  return {
    key,
    bodyHash: bodyHash(body),
    expiresAt: Math.floor(now.getTime() / 1000) + idempotencyLifetimeSeconds,
    now,
  };
}

/** 111: the key answers another request (another body, or another route) for 24 hours. */
export function keyReusedError(): ServiceError {
  return new ServiceError(
    Code.MethodValidation,
    'This Idempotency-Key was already used with a different request',
    {
      details: [{ field: 'Idempotency-Key', message: 'Reused with a different body within 24 hours' }],
    },
  );
}

/** The first response for a key; the same key with another body is 111. */
export function replayOf(
  stored: StoredResponse,
  claim: IdempotencyClaim,
): { message_uuid: string; status: string } {
  if (stored.bodyHash !== claim.bodyHash) throw keyReusedError();
  return { message_uuid: stored.messageUuid, status: stored.status };
}
