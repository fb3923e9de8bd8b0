import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type WebhookAddRequest, webhookAddRequest } from '#shared/schemas/webhooks.ts';
import { addWebhook } from '#shared/services/webhooks/endpoints.ts';

/** POST /webhook/add-1.0: adds an endpoint; the answer carries its secret, shown only here. */
export const handler = protectedHandler<WebhookAddRequest>(
  'webhook-add',
  { input: { schema: webhookAddRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await addWebhook(input, caller.account)),
);
