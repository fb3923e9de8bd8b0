import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { replayWebhookEvent } from '#shared/webhooks/endpoints.ts';
import { webhookReplay } from '#shared/webhooks/routes.ts';
import { type WebhookReplayRequest, webhookReplayRequest } from '#shared/webhooks/schemas.ts';

/** POST /webhook/replay-1.0: delivers a stored event (kept 7 days) again, with the same webhook-id. */
export const handler = protectedHandler<WebhookReplayRequest>(
  webhookReplay,
  { input: { schema: webhookReplayRequest, from: 'body' } },
  async ({ input, caller }) =>
    dataResponse(await replayWebhookEvent(input.webhook_id, input.event_id, caller.account)),
);
