import { getMessageDetails, listMessages } from '#shared/messages/query.ts';
import { messageQuery } from '#shared/messages/routes.ts';
import { type MessageQueryRequest, messageQueryRequest } from '#shared/messages/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { log } from '#shared/platform/observability/log.ts';

/** POST /message/query-1.0: one of the caller's messages in full, or a filtered page of them. */
export const handler = protectedHandler<MessageQueryRequest>(
  messageQuery,
  { input: { schema: messageQueryRequest, from: 'body' } },
  async ({ input, caller, requestId }) => {
    if (input.message_uuid !== undefined) {
      return dataResponse(await getMessageDetails(input.message_uuid, caller.account));
    }
    const { scannedCount, budgetReached, ...page } = await listMessages(
      caller.account,
      input.filters ?? {},
      input.cursor,
    );
    log('debug', 'message query', { requestId, returned: page.count, scannedCount, budgetReached });
    return dataResponse(page);
  },
);
