import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type WebhookQueryRequest, webhookQueryRequest } from '#shared/schemas/webhooks.ts';
import { queryWebhooks } from '#shared/services/webhooks/endpoints.ts';

/** POST /webhook/query-1.0: every endpoint, or one with its latest 50 delivery attempts. */
export const handler = protectedHandler<WebhookQueryRequest>(
  'webhook-query',
  { input: { schema: webhookQueryRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await queryWebhooks(input.webhook_id, caller.account)),
);
