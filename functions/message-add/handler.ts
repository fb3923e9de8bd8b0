import { addMessage } from '#shared/messages/add.ts';
import { messageAdd } from '#shared/messages/routes.ts';
import { type MessageAddRequest, messageAddRequest } from '#shared/messages/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/**
 * POST /message/add-1.0: accepts a message (immediate, scheduled, manual-wait) or releases /
 * cancels a held one (manual-send, manual-cancel). Answers only `message_uuid` and `status`.
 */
export const handler = protectedHandler<MessageAddRequest>(
  messageAdd,
  { input: { schema: messageAddRequest, from: 'body' } },
  async ({ input, caller, dryRun, event }) =>
    dataResponse(
      await addMessage(input, {
        account: caller.account,
        domains: caller.domains,
        dryRun,
        idempotencyKey: event.headers['idempotency-key'],
        body: event.jsonBody,
      }),
    ),
);
