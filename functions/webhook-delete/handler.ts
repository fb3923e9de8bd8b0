import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type WebhookIdRequest, webhookIdRequest } from '#shared/schemas/webhooks.ts';
import { deleteWebhook } from '#shared/services/webhooks/endpoints.ts';

/** POST /webhook/delete-1.0: removes an endpoint; queued deliveries to it are dropped. */
export const handler = protectedHandler<WebhookIdRequest>(
  'webhook-delete',
  { input: { schema: webhookIdRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await deleteWebhook(input.webhook_id, caller.account)),
);
