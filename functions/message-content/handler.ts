import { getMessageContent } from '#shared/delivery/content.ts';
import { messageContent } from '#shared/delivery/routes.ts';
import { type MessageContentRequest, messageContentRequest } from '#shared/delivery/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /message/content-1.0: one of the caller's messages as sent (or as it will be composed). */
export const handler = protectedHandler<MessageContentRequest>(
  messageContent,
  { input: { schema: messageContentRequest, from: 'body' } },
  async ({ input, caller }) =>
    dataResponse(await getMessageContent(input.message_uuid, caller.account, new Date(), input.recipient)),
);
