import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { chargeMessages } from '#shared/middleware/rate-limit.ts';
import { type MessageBatchEnvelope, messageBatchEnvelope } from '#shared/schemas/messages.ts';
import { sendBatch } from '#shared/services/messages/batch.ts';

/**
 * POST /message/batch-1.0: up to 500 new messages in one request, each what add accepts. The rate
 * limit counts messages: the request was admitted with one token and pays for the others here.
 */
export const handler = protectedHandler<MessageBatchEnvelope>(
  'message-batch',
  { input: { schema: messageBatchEnvelope, from: 'body' } },
  async ({ input, caller, dryRun, event, context }) => {
    chargeMessages(context, input.messages.length);
    return dataResponse(
      await sendBatch(input, {
        account: caller.account,
        dryRun,
        idempotencyKey: event.headers['idempotency-key'],
        body: event.jsonBody,
      }),
    );
  },
);
