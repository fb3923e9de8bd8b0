import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type MessageContentRequest, messageContentRequest } from '#shared/schemas/messages.ts';
import { getMessageContent } from '#shared/services/messages/content.ts';

/** POST /message/content-1.0: one of the caller's messages as sent (or as it will be composed). */
export const handler = protectedHandler<MessageContentRequest>(
  'message-content',
  { input: { schema: messageContentRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await getMessageContent(input.message_uuid, caller.account)),
);
