import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import type { TrackingRecord } from '../model/tracking-view.ts';

/**
 * A message's open and click records (written by shared/tracking, one per recipient and kind, in
 * the message's partition under `TRACK#`): one query, for the query by uuid.
 */
export async function trackingRecordsOf(messageUuid: string): Promise<TrackingRecord[]> {
  const page = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.message(messageUuid).pk, ':prefix': 'TRACK#' },
  });
  return page.items.flatMap((item) =>
    (item.kind === 'open' || item.kind === 'click') &&
    typeof item.recipient_index === 'number' &&
    typeof item.first_at === 'string' &&
    typeof item.last === 'object' &&
    item.last !== null
      ? [item as unknown as TrackingRecord]
      : [],
  );
}
