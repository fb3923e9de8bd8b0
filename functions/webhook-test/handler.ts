import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { sendTestEvent } from '#shared/webhooks/endpoints.ts';
import { webhookTest } from '#shared/webhooks/routes.ts';
import { type WebhookTestRequest, webhookTestRequest } from '#shared/webhooks/schemas.ts';

/** POST /webhook/test-1.0: a signed sample event through the normal delivery path. */
export const handler = protectedHandler<WebhookTestRequest>(
  webhookTest,
  { input: { schema: webhookTestRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await sendTestEvent(input, caller.account)),
);
