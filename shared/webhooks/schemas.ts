import * as z from 'zod/mini';
import { serverDate } from '../platform/schemas/dates.ts';
import { describe, documented } from '../platform/schemas/describe.ts';
import { webhookEventTypes } from './model/events.ts';
import { maxUrlLength } from './model/targets.ts';

/**
 * Request and success-response schemas of the webhook routes (docs/webhooks.md). Response schemas
 * describe the `data` member of the envelope (a route's `response` in its wing's routes.ts).
 */

export const webhookIdPattern = /^wh_[0-9a-f]{24}$/;
export const eventIdPattern = /^evt_[0-9a-f]{32}$/;

export const webhookId = describe(
  z.string().check(z.regex(webhookIdPattern, 'Must be a webhook id (wh_ and 24 hex digits)')),
  'Identifies an endpoint',
  'wh_5f0c6a1e2b3d4c5e6f708192',
);

const eventId = describe(
  z.string().check(z.regex(eventIdPattern, 'Must be an event id (evt_ and 32 hex digits)')),
  'Identifies an event; sent as the webhook-id header, the same on every retry and replay',
  'evt_0f1e2d3c4b5a69788796a5b4c3d2e1f0',
);

const eventType = describe(
  z.enum(webhookEventTypes, {
    error: (issue) =>
      `${typeof issue.input === 'string' ? `"${issue.input.slice(0, 100)}" is not an event type` : 'An event type is a string'}; the types are ${webhookEventTypes.join(', ')}`,
  }),
  'An event type',
);

/** Unknown fields are refused (107 naming them), except `tenant_id`, which is accepted and ignored. */
const tenantId = z.optional(describe(z.unknown(), 'Accepted and ignored, as on every route'));

export const webhookAddRequest = z.strictObject({
  url: documented(
    describe(
      z
        .string()
        .check(
          z.trim(),
          z.minLength(1, 'url is required'),
          z.maxLength(maxUrlLength, `url is at most ${maxUrlLength} characters`),
        ),
      'Where events are POSTed: https on AWS; its address must be public (not loopback, private, link-local or metadata)',
      'https://hooks.example.com/svc-mail',
    ),
    { format: 'uri', pattern: '^\\s*[hH][tT][tT][pP][sS]?://' },
  ),
  events: z.optional(
    documented(
      describe(
        z.array(eventType).check(
          z.minLength(1, 'events lists at least one type (leave it out for all)'),
          z.refine((list) => new Set(list).size === list.length, 'events lists each type once'),
        ),
        'The event types to receive; all when left out',
      ),
      { uniqueItems: true },
    ),
  ),
  description: z.optional(
    describe(
      z.string().check(z.maxLength(256, 'description is at most 256 characters')),
      'A note for you',
      'Order system',
    ),
  ),
  tenant_id: tenantId,
});

export const webhookIdRequest = z.strictObject({ webhook_id: webhookId, tenant_id: tenantId });

export const webhookQueryRequest = z.strictObject({ webhook_id: z.optional(webhookId), tenant_id: tenantId });

export const webhookReplayRequest = z.strictObject({
  webhook_id: webhookId,
  event_id: eventId,
  tenant_id: tenantId,
});

export const webhookUpdateRequest = z.strictObject({
  webhook_id: webhookId,
  url: z.optional(
    describe(
      z
        .string()
        .check(
          z.trim(),
          z.minLength(1, 'url cannot be empty (leave it out to keep it)'),
          z.maxLength(maxUrlLength, `url is at most ${maxUrlLength} characters`),
        ),
      'The new target URL, checked as on add; left out, it stays',
      'https://hooks.example.com/svc-mail/v2',
    ),
  ),
  events: z.optional(
    describe(
      z.array(eventType).check(
        z.minLength(1, 'events lists at least one type'),
        z.refine((list) => new Set(list).size === list.length, 'events lists each type once'),
      ),
      'The event types to receive from now on; left out, they stay',
    ),
  ),
  tenant_id: tenantId,
});

export const webhookTestRequest = z.strictObject({
  webhook_id: webhookId,
  type: describe(z.enum(webhookEventTypes), 'The type of the sample event to send', 'message.delivered'),
  tenant_id: tenantId,
});

const endpointFields = {
  webhook_id: webhookId,
  url: describe(z.string(), 'The target URL'),
  events: describe(z.array(eventType), 'The event types it receives'),
  description: describe(z.nullable(z.string()), 'Your note, or null'),
  enabled: describe(
    z.boolean(),
    'false once the receiver answered 410 Gone, or after 5 days of failures without a success: it receives nothing more (delete it and add it again)',
  ),
  created_at: serverDate('When the endpoint was added'),
  health: describe(
    z.object({
      state: describe(
        z.enum(['healthy', 'failing', 'paused', 'disabled']),
        'healthy; failing (its last attempts failed); paused (its deliveries wait until paused_until, then one trial attempt decides); disabled',
      ),
      consecutive_failures: describe(z.number(), 'Attempts without a 2xx since the last one with a 2xx'),
      failing_since: z.nullable(serverDate('When the first of those failures happened, or null')),
      paused_until: z.nullable(serverDate('Until when deliveries wait, or null')),
    }),
    'How the endpoint is doing (docs/webhooks.md, "Failing endpoints")',
  ),
  note: describe(
    z.nullable(z.string()),
    'Why deliveries are paused or the endpoint is disabled, and what happens next; null when all is well',
  ),
};

export const webhookView = z.object(endpointFields);

export const webhookWithSecret = z.object({
  ...endpointFields,
  secret: describe(
    z.string(),
    'The signing secret (whsec_ + base64 of 32 bytes). Shown only now; store it to verify signatures',
    'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  ),
});

export const deliveryAttempt = z.object({
  event_id: eventId,
  type: eventType,
  attempt: describe(z.number(), 'Attempt number, 1 to 10'),
  status_code: describe(z.nullable(z.number()), 'The HTTP status answered, or null when there was no answer'),
  error: describe(z.nullable(z.string()), 'Why the attempt failed, or null when it succeeded'),
  at: serverDate('When the attempt was made'),
  next_attempt_at: z.nullable(serverDate('When the next attempt is due, or null when none follows')),
});

export const webhookAddResponse = z.object({ webhook: webhookWithSecret });
export const webhookRotateSecretResponse = z.object({ webhook: webhookWithSecret });

export const webhookQueryResponse = z.union([
  z.object({
    webhooks: describe(z.array(webhookView), 'Your endpoints, oldest first (never their secrets)'),
    count: describe(z.number(), 'Number of endpoints'),
  }),
  z.object({
    webhook: z.object({
      ...endpointFields,
      deliveries: describe(z.array(deliveryAttempt), 'The latest 50 delivery attempts, newest first'),
    }),
  }),
]);

export const webhookDeleteResponse = z.object({
  webhook_id: webhookId,
  deleted: z.literal(true),
});

export const webhookReplayResponse = z.object({
  webhook_id: webhookId,
  event_id: eventId,
  queued: z.literal(true),
});

export const webhookUpdateResponse = z.object({ webhook: webhookView });

export const webhookTestResponse = z.object({
  webhook_id: webhookId,
  event_id: eventId,
  type: eventType,
  queued: z.literal(true),
});

export type WebhookAddRequest = z.infer<typeof webhookAddRequest>;
export type WebhookIdRequest = z.infer<typeof webhookIdRequest>;
export type WebhookQueryRequest = z.infer<typeof webhookQueryRequest>;
export type WebhookReplayRequest = z.infer<typeof webhookReplayRequest>;
export type WebhookUpdateRequest = z.infer<typeof webhookUpdateRequest>;
export type WebhookTestRequest = z.infer<typeof webhookTestRequest>;
