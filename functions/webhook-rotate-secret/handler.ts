import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { rotateWebhookSecret } from '#shared/webhooks/endpoints.ts';
import { webhookRotateSecret } from '#shared/webhooks/routes.ts';
import { type WebhookIdRequest, webhookIdRequest } from '#shared/webhooks/schemas.ts';

/** POST /webhook/rotate-secret-1.0: a new secret; the old one also signs for 24 h. */
export const handler = protectedHandler<WebhookIdRequest>(
  webhookRotateSecret,
  { input: { schema: webhookIdRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await rotateWebhookSecret(input.webhook_id, caller.account)),
);
