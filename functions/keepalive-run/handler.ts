import type { Context } from 'aws-lambda';
import { type HousekeepingResult, runAvatarHousekeeping } from '#shared/avatars/housekeeping.ts';
import { keepaliveRun } from '#shared/avatars/routes.ts';
import { keepaliveRunRequest } from '#shared/avatars/schemas.ts';
import type { ApiContext, ApiEvent, ApiResult } from '#shared/platform/http/api-types.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { log } from '#shared/platform/observability/log.ts';

/** What EventBridge (rules or Scheduler) sends on a schedule; it never comes through API Gateway. */
export interface ScheduledEvent {
  source: 'aws.events' | 'aws.scheduler';
  'detail-type': 'Scheduled Event';
  id?: string;
  time?: string;
}

export function isScheduledEvent(event: unknown): event is ScheduledEvent {
  const candidate = event as Partial<ScheduledEvent> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    (candidate.source === 'aws.events' || candidate.source === 'aws.scheduler') &&
    candidate['detail-type'] === 'Scheduled Event'
  );
}

/** POST /keepalive-1.0 through the gateway: Bearer token with `keepalive:run`. */
const httpHandler = protectedHandler(
  keepaliveRun,
  // No body, or an empty object: anything else is 107 (strict input).
  { input: { schema: keepaliveRunRequest, from: 'body' } },
  async ({ context, requestId }) =>
    dataResponse(await runAvatarHousekeeping(() => context.getRemainingTimeInMillis(), requestId)),
);

/**
 * Two doors to one job. API Gateway events go through the full chain (token, scope, envelope). A
 * scheduled event is EventBridge invoking the function directly: IAM is the trust boundary, and no
 * HTTP caller can produce that event shape (API Gateway puts a caller's body in `event.body`).
 * A failed scheduled run throws, so Lambda records an error and retries; the saved cursor resumes it.
 */
export async function handler(
  event: ApiEvent | ScheduledEvent,
  context: Context,
): Promise<ApiResult | HousekeepingResult> {
  if (isScheduledEvent(event)) {
    const requestId = context.awsRequestId;
    log('info', 'scheduled keepalive', { requestId, source: event.source });
    return runAvatarHousekeeping(() => context.getRemainingTimeInMillis(), requestId);
  }
  // The chain's first middleware fills in the ApiContext fields.
  return httpHandler(event, context as ApiContext);
}
