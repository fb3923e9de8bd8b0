import { sendBatch } from '#shared/messages/batch.ts';
import { chargeBatch } from '#shared/messages/batch-rate.ts';
import { messageBatch } from '#shared/messages/routes.ts';
import { type MessageBatchEnvelope, messageBatchEnvelope } from '#shared/messages/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/**
 * POST /message/batch-1.0: up to 500 new messages in one request, each what add accepts. The rate
 * limit counts messages: the account's budget shared by every instance admits the batch (or
 * answers 115) and takes one token per message; this instance's bucket, which admitted the request
 * with one token, pays for the others.
 */
export const handler = protectedHandler<MessageBatchEnvelope>(
  messageBatch,
  { input: { schema: messageBatchEnvelope, from: 'body' } },
  async ({ input, caller, dryRun, event, context }) => {
    await chargeBatch(context, caller.account, input.messages.length);
    return dataResponse(
      await sendBatch(input, {
        account: caller.account,
        domains: caller.domains,
        dryRun,
        idempotencyKey: event.headers['idempotency-key'],
        body: event.jsonBody,
      }),
    );
  },
);
