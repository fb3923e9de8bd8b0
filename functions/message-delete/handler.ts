import { deleteMessages } from '#shared/messages/delete.ts';
import { messageDelete } from '#shared/messages/routes.ts';
import { type MessageDeleteRequest, messageDeleteRequest } from '#shared/messages/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /message/delete-1.0: deletes the caller's unsent messages; sent ones are protected. */
export const handler = protectedHandler<MessageDeleteRequest>(
  messageDelete,
  { input: { schema: messageDeleteRequest, from: 'body' } },
  async ({ input, caller, dryRun }) =>
    dataResponse(await deleteMessages(input.message_uuids, caller.account, dryRun)),
);
