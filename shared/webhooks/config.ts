import { envString } from '../platform/config/env.ts';
import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { pauseSeconds } from './model/endpoint-health.ts';
import { parseRetrySchedule, parseSeconds } from './model/retry-schedule.ts';
import type { TargetPolicy } from './model/targets.ts';

/**
 * Webhook settings (docs/webhooks.md, "Configuration"). Read when first needed, so a function
 * missing its queue answers code 3 instead of failing to start; a malformed schedule fails loudly.
 */
function required(name: string, what: string): string {
  const value = envString(name);
  if (value === undefined)
    throw new ServiceError(Code.DatabaseNotConfigured, `The ${what} is not configured`);
  return value;
}

export const webhookQueueUrl = (): string => required('WEBHOOK_QUEUE_URL', 'webhook queue');
export const webhookDeadLetterQueueUrl = (): string =>
  required('WEBHOOK_DEAD_LETTER_QUEUE_URL', 'webhook dead-letter queue');

let schedule: { raw: string | undefined; value: readonly number[] } | undefined;

/** WEBHOOK_RETRY_SCHEDULE, or the default 5 s … 24 h. */
export function retrySchedule(): readonly number[] {
  const raw = envString('WEBHOOK_RETRY_SCHEDULE');
  if (schedule === undefined || schedule.raw !== raw) schedule = { raw, value: parseRetrySchedule(raw) };
  return schedule.value;
}

let pauses: { raw: string | undefined; value: readonly number[] } | undefined;

/**
 * WEBHOOK_PAUSE_SCHEDULE (comma-separated seconds, for tests), or the default pauses of a failing
 * endpoint: 1 min, 5 min, 15 min, 30 min, then 1 h (docs/webhooks.md, "Failing endpoints").
 */
export function pauseSchedule(): readonly number[] {
  const raw = envString('WEBHOOK_PAUSE_SCHEDULE');
  if (pauses === undefined || pauses.raw !== raw)
    pauses = { raw, value: raw === undefined ? pauseSeconds : parseSeconds('WEBHOOK_PAUSE_SCHEDULE', raw) };
  return pauses.value;
}

/**
 * https only when running on AWS Lambda; WEBHOOK_ALLOW_PRIVATE_TARGETS=true lifts the address rule
 * (the local host's default, so receivers on the same machine work).
 */
export function targetPolicy(): TargetPolicy {
  return {
    requireHttps: process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined,
    allowPrivate: envString('WEBHOOK_ALLOW_PRIVATE_TARGETS', 'false')?.toLowerCase() === 'true',
  };
}

export const maxWebhooksPerAccount = 10;
/** Encryption-context purpose of webhook secrets; the stack's KMS grants require it. */
export const webhookSecretPurpose = 'svc-mail-webhook-secret';
/** Stored events stay replayable this long (TTL). */
export const eventRetentionSeconds = 7 * 24 * 3600;
/** Delivery attempts are kept this long (TTL); the query shows the latest 50. */
export const deliveryRetentionSeconds = 30 * 24 * 3600;
/** After a rotation the previous secret also signs for this long. */
export const previousSecretSeconds = 24 * 3600;
