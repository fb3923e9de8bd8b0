import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { queryWebhooks } from '#shared/webhooks/endpoints.ts';
import { webhookQuery } from '#shared/webhooks/routes.ts';
import { type WebhookQueryRequest, webhookQueryRequest } from '#shared/webhooks/schemas.ts';

/** POST /webhook/query-1.0: every endpoint, or one with its latest 50 delivery attempts. */
export const handler = protectedHandler<WebhookQueryRequest>(
  webhookQuery,
  { input: { schema: webhookQueryRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await queryWebhooks(input.webhook_id, caller.account)),
);
