import { mapLimit } from '../../platform/concurrency/map-limit.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import { firstWatchAt } from '../config.ts';
import { acceptedLane, acceptedLaneStatuses, isInFlight, messageIndexAttributes } from './message-index.ts';

/**
 * The one-off move of messages written by releases before listing lanes and watch entries
 * (docs/decisions/0020-watch-entries.md): a `sent` or `delivered` message listed
 * under its status (`STATUS#<account>#sent#<s>`) moves to its account's accepted lane; a `queued`
 * or `processing` one on the in-flight index (`INFLIGHT#<n>`, no listing entry) gets its lane and a
 * watch entry, as a message queued now would (the dispatcher drains those too, but the command
 * finishes the move in one pass). Every other message is already where the new layout puts it. An operator command, not a
 * request path: it Scans the table (parallel segments), and each move is conditional on the keys it
 * read, so it can run beside the service, be stopped and be run again.
 */
export interface LayoutMigration {
  scanned: number;
  moved: number;
  /** Moved by the service between the read and the move (already in the new layout). */
  skipped: number;
}

export async function migrateMessageLayout(
  options: { account?: string; segments?: number } = {},
): Promise<LayoutMigration> {
  const segments = options.segments ?? 4;
  const result: LayoutMigration = { scanned: 0, moved: 0, skipped: 0 };
  await mapLimit(
    Array.from({ length: segments }, (_, segment) => segment),
    segments,
    async (segment) => {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await table.scan({
          Segment: segment,
          TotalSegments: segments,
          // Message items of the old layout: a status of the accepted lane and no lane key, or a
          // listing key that names the status instead of the lane.
          FilterExpression: `begins_with(pk, :message) AND sk = :sk AND #status IN (:queued, :processing, :sent, :delivered) AND (attribute_not_exists(gsi2pk) OR NOT contains(gsi2pk, :lane))${options.account === undefined ? '' : ' AND account_id = :account'}`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':message': 'MESSAGE#',
            ':sk': 'MESSAGE',
            ':queued': 'queued',
            ':processing': 'processing',
            ':sent': 'sent',
            ':delivered': 'delivered',
            ':lane': '#accepted#',
            ...(options.account === undefined ? {} : { ':account': options.account }),
          },
          ExclusiveStartKey: startKey,
        });
        result.scanned += page.scannedCount;
        await mapLimit(page.items, 8, async (item) => {
          if (await moveWhileOld(item)) result.moved += 1;
          else result.skipped += 1;
        });
        startKey = page.lastKey;
      } while (startKey !== undefined);
    },
  );
  return result;
}

/** Whether a message item is still in the old layout (what the Scan's filter selects). */
const isOldLayout = (item: Record<string, unknown> | undefined): item is Record<string, unknown> =>
  item !== undefined &&
  (acceptedLaneStatuses as readonly string[]).includes(String(item.status)) &&
  !String(item.gsi2pk ?? '').includes(`#${acceptedLane}#`);

/**
 * Moves one message, reading it again when the service changed it between the read and the move:
 * a `sent` message that became `delivered` keeps its old listing key (the service does not move a
 * message within the accepted lane), so it still needs the move. False when it no longer does.
 */
export async function moveWhileOld(first: Record<string, unknown>): Promise<boolean> {
  let item: Record<string, unknown> | undefined = first;
  for (let attempt = 0; attempt < 5 && isOldLayout(item); attempt++) {
    if (await moveToLane(item)) return true;
    item = await getMessageItem(String(first.message_uuid));
  }
  if (isOldLayout(item))
    throw new Error(`message ${String(first.message_uuid)} kept changing during its move`);
  return false;
}

async function getMessageItem(uuid: string): Promise<Record<string, unknown> | undefined> {
  return table.get(keys.message(uuid), { ConsistentRead: true });
}

/** One message onto its lane (and, in flight, a watch entry), if its keys are still those read. */
async function moveToLane(item: Record<string, unknown>): Promise<boolean> {
  const status = String(item.status);
  const uuid = String(item.message_uuid);
  const { gsi1sk: _sortKey, ...target } = messageIndexAttributes({
    message_uuid: uuid,
    account_id: String(item.account_id),
    created_at: String(item.created_at),
    status,
    // Watched as a message queued now is: time enough for this host's clock to be off.
    ...(isInFlight(status) ? { watch_at: firstWatchAt(Date.now()) } : {}),
  });
  // A settled message keeps whatever gsi3 entry it has (none, in the old layout).
  const set = isInFlight(status) ? target : { gsi2pk: target.gsi2pk };
  const update = table.setAttributes(set);
  const result = await table.update({
    Key: keys.message(uuid),
    UpdateExpression: update.expression,
    ConditionExpression: `${item.gsi2pk === undefined ? 'attribute_not_exists(gsi2pk)' : 'gsi2pk = :seen'} AND #status = :status`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ...update.values,
      ...(item.gsi2pk === undefined ? {} : { ':seen': item.gsi2pk }),
      ':status': status,
    },
  });
  return result.outcome === 'applied';
}
