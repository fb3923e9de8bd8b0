import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type MessageDeleteRequest, messageDeleteRequest } from '#shared/schemas/messages.ts';
import { deleteMessages } from '#shared/services/messages/delete.ts';

/** POST /message/delete-1.0: deletes the caller's unsent messages; sent ones are protected. */
export const handler = protectedHandler<MessageDeleteRequest>(
  'message-delete',
  { input: { schema: messageDeleteRequest, from: 'body' } },
  async ({ input, caller, dryRun }) =>
    dataResponse(await deleteMessages(input.message_uuids, caller.account, dryRun)),
);
