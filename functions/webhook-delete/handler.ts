import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { deleteWebhook } from '#shared/webhooks/endpoints.ts';
import { webhookDelete } from '#shared/webhooks/routes.ts';
import { type WebhookIdRequest, webhookIdRequest } from '#shared/webhooks/schemas.ts';

/** POST /webhook/delete-1.0: removes an endpoint; queued deliveries to it are dropped. */
export const handler = protectedHandler<WebhookIdRequest>(
  webhookDelete,
  { input: { schema: webhookIdRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await deleteWebhook(input.webhook_id, caller.account)),
);
