import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { addWebhook } from '#shared/webhooks/endpoints.ts';
import { webhookAdd } from '#shared/webhooks/routes.ts';
import { type WebhookAddRequest, webhookAddRequest } from '#shared/webhooks/schemas.ts';

/** POST /webhook/add-1.0: adds an endpoint; the answer carries its secret, shown only here. */
export const handler = protectedHandler<WebhookAddRequest>(
  webhookAdd,
  { input: { schema: webhookAddRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await addWebhook(input, caller.account)),
);
