import { decodeCursor, encodeCursor, type Positions } from '../../domain/messages/cursor.ts';
import { mergePages, type StreamPage } from '../../domain/messages/merge.ts';
import { detailsView, type MessageItem, sortKeyOf, summaryView } from '../../domain/messages/message.ts';
import type { MessageStatus } from '../../domain/messages/statuses.ts';
import { Code } from '../../errors/catalogue.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { getMessage, queryMessages } from '../../repositories/messages.ts';
import type { MessageQueryRequest } from '../../schemas/messages.ts';
import { parseDateWithOffset } from '../../time/format.ts';

export const defaultQueryLimit = 100;
const allStatuses = '*';

/** One message of the caller in full; unknown and foreign messages alike are 112. */
export async function getMessageDetails(uuid: string, account: string) {
  const item = await getMessage(uuid.toLowerCase());
  if (item === undefined || item.account_id !== account) {
    throw new ServiceError(Code.NotFound, 'No such message', {
      details: [{ field: 'message_uuid', message: 'Unknown message' }],
    });
  }
  return detailsView(item);
}

export interface MessagePage {
  messages: ReturnType<typeof summaryView>[];
  count: number;
  next_cursor: string | null;
}

/**
 * A page of the caller's messages, newest first. Without a status filter one Query on gsi1; with
 * statuses one Query per status on gsi2, merged by sort key. Dates bound the index sort key, so
 * DynamoDB never evaluates an item that is not returned or kept for the next page.
 * `scannedCount` (items DynamoDB evaluated) is for tests and the debug log, not the response.
 */
export async function listMessages(
  account: string,
  filters: NonNullable<MessageQueryRequest['filters']>,
  cursor: string | undefined,
): Promise<MessagePage & { scannedCount: number }> {
  const statuses: string[] =
    filters.status === undefined
      ? [allStatuses]
      : [...new Set(Array.isArray(filters.status) ? filters.status : [filters.status])].sort();
  const createdFrom = filters.date_from === undefined ? undefined : parseDateWithOffset(filters.date_from);
  const createdTo = filters.date_to === undefined ? undefined : parseDateWithOffset(filters.date_to);
  if (
    (filters.date_from !== undefined && createdFrom === undefined) ||
    (filters.date_to !== undefined && createdTo === undefined)
  ) {
    throw new ServiceError(Code.InvalidInput, undefined, {
      details: [{ field: 'filters', message: 'date_from and date_to must be ISO 8601 with an offset' }],
    });
  }
  const limit = filters.limit ?? defaultQueryLimit;
  const fingerprint = { statuses, from: createdFrom?.toISOString(), to: createdTo?.toISOString() };

  let positions: Positions = Object.fromEntries(statuses.map((status) => [status, { done: false }]));
  if (cursor !== undefined) {
    const decoded = decodeCursor(cursor, account, fingerprint, statuses);
    if (!decoded.ok)
      throw new ServiceError(Code.InvalidInput, undefined, {
        details: [{ field: 'cursor', message: decoded.message }],
      });
    positions = decoded.positions;
  }

  const open = statuses.filter((status) => positions[status]?.done !== true);
  const pages: Array<StreamPage<MessageItem> & { scannedCount: number }> = await Promise.all(
    open.map(async (status) => {
      const page = await queryMessages({
        account,
        ...(status === allStatuses ? {} : { status: status as MessageStatus }),
        ...(createdFrom === undefined ? {} : { createdFrom: createdFrom.toISOString() }),
        ...(createdTo === undefined ? {} : { createdTo: createdTo.toISOString() }),
        ...(positions[status]?.after === undefined ? {} : { after: positions[status].after }),
        limit,
      });
      return { stream: status, items: page.items, more: page.more, scannedCount: page.scannedCount };
    }),
  );
  const merged = mergePages(pages, positions, limit, sortKeyOf);
  const scannedCount = pages.reduce((sum, page) => sum + page.scannedCount, 0);
  return {
    messages: merged.items.map(summaryView),
    count: merged.items.length,
    next_cursor: encodeCursor(account, fingerprint, merged.positions),
    scannedCount,
  };
}
