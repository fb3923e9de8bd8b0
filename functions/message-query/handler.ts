import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { log } from '#shared/observability/log.ts';
import { type MessageQueryRequest, messageQueryRequest } from '#shared/schemas/messages.ts';
import { getMessageDetails, listMessages } from '#shared/services/messages/query.ts';

/** POST /message/query-1.0: one of the caller's messages in full, or a filtered page of them. */
export const handler = protectedHandler<MessageQueryRequest>(
  'message-query',
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
