import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { updateWebhook } from '#shared/webhooks/endpoints.ts';
import { webhookUpdate } from '#shared/webhooks/routes.ts';
import { type WebhookUpdateRequest, webhookUpdateRequest } from '#shared/webhooks/schemas.ts';

/** POST /webhook/update-1.0: a new URL or new events for an endpoint; the secret stays. */
export const handler = protectedHandler<WebhookUpdateRequest>(
  webhookUpdate,
  { input: { schema: webhookUpdateRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await updateWebhook(input, caller.account)),
);
