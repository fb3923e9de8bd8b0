import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { batchGetItems } from '../../platform/table/batch-get.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import type { InboundItem } from '../model/inbound.ts';
import { inboundIndexAttributes } from './inbound-index.ts';

/**
 * Received mail in the table (docs/data-model.md, "Inbound"): one item per received message and
 * receiving recipient, written once (it never changes) with its three index entries, read by key,
 * listed through the indexes (never a Scan) and deleted by its account.
 */

const nowSeconds = () => Math.floor(Date.now() / 1000);

function toItem(raw: Record<string, unknown>): InboundItem {
  const { pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi3pk, gsi3sk, ...rest } = raw;
  return rest as unknown as InboundItem;
}

/** An item whose retention has passed counts as gone (TTL removes it within days, not at once). */
const live = (raw: Record<string, unknown> | undefined): raw is Record<string, unknown> =>
  raw !== undefined && Number(raw.expires_at) >= nowSeconds();

/** Writes the item unless it exists (a notification processed twice); false when it did. */
export async function putInbound(item: InboundItem): Promise<boolean> {
  const result = await table.put({
    Item: {
      ...keys.inbound(item.inbound_uuid),
      ...inboundIndexAttributes({ ...item, ...(item.from ? { sender: item.from.email } : {}) }),
      ...item,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  return result.outcome === 'applied';
}

export async function getInbound(inboundUuid: string): Promise<InboundItem | undefined> {
  const item = await table.get(keys.inbound(inboundUuid), { ConsistentRead: true });
  return live(item) ? toItem(item) : undefined;
}

export async function getInbounds(inboundUuids: readonly string[]): Promise<Map<string, InboundItem>> {
  const found = new Map<string, InboundItem>();
  for (const raw of await batchGetItems(inboundUuids.map((uuid) => keys.inbound(uuid)))) {
    if (live(raw)) found.set(String(raw.inbound_uuid), toItem(raw));
  }
  return found;
}

export interface InboundIndexStream {
  index: 'gsi1' | 'gsi2' | 'gsi3';
  partition: string;
}

const indexKeyNames = {
  gsi1: { pk: 'gsi1pk', sk: 'gsi1sk' },
  gsi2: { pk: 'gsi2pk', sk: 'gsi1sk' },
  gsi3: { pk: 'gsi3pk', sk: 'gsi3sk' },
} as const;

/**
 * One page of an index partition's sort keys (`<received_at>#<uuid>`), newest first, bounded by
 * the date range: a key condition, never a filter. The indexes project keys only.
 */
export async function queryInboundKeys(
  stream: InboundIndexStream,
  query: { receivedFrom?: string; receivedTo?: string; after?: string; limit: number },
): Promise<{ keys: string[]; more: boolean; scannedCount: number }> {
  const names = indexKeyNames[stream.index];
  const startKey =
    query.after === undefined
      ? undefined
      : {
          ...keys.inbound(query.after.slice(query.after.indexOf('#') + 1)),
          [names.pk]: stream.partition,
          [names.sk]: query.after,
          // gsi1 and gsi2 share gsi1sk; the key of either index is pk, sk and its own two.
        };
  const page = await table.query({
    IndexName: stream.index,
    KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
    ExpressionAttributeNames: { '#pk': names.pk, '#sk': names.sk },
    ExpressionAttributeValues: {
      ':pk': stream.partition,
      ':lower': query.receivedFrom ?? '0',
      ':upper': query.receivedTo === undefined ? '~' : `${query.receivedTo}#~`,
    },
    ScanIndexForward: false,
    Limit: query.limit,
    ExclusiveStartKey: startKey,
  });
  return {
    keys: page.items.map((item) => String(item[names.sk])),
    more: page.lastKey !== undefined,
    scannedCount: page.scannedCount,
  };
}

/** Deletes the item if it is the account's; the deleted item, or undefined (unknown or foreign). */
export async function deleteInbound(
  inboundUuid: string,
  accountId: string,
): Promise<InboundItem | undefined> {
  const result = await table.delete({
    Key: keys.inbound(inboundUuid),
    ConditionExpression: 'account_id = :account AND expires_at >= :now',
    ExpressionAttributeValues: { ':account': accountId, ':now': nowSeconds() },
    ReturnValues: 'ALL_OLD',
  });
  return result.outcome === 'applied' && result.attributes !== undefined
    ? toItem(result.attributes)
    : undefined;
}

/** Which of these items still exist (the siblings of a deleted one that share its objects). */
export async function existingInbound(inboundUuids: readonly string[]): Promise<string[]> {
  if (inboundUuids.length === 0) return [];
  return (await batchGetItems(inboundUuids.map((uuid) => keys.inbound(uuid)))).map((raw) =>
    String(raw.inbound_uuid),
  );
}

/** A table stream image (DynamoDB JSON) → the received message, or undefined for any other item. */
export function inboundItemOf(image: Record<string, AttributeValue> | undefined): InboundItem | undefined {
  if (image === undefined) return undefined;
  const raw = unmarshall(image) as Record<string, unknown>;
  if (typeof raw.inbound_uuid !== 'string' || typeof raw.account_id !== 'string') return undefined;
  const key = keys.inbound(raw.inbound_uuid);
  if (raw.pk !== key.pk || raw.sk !== key.sk) return undefined;
  return toItem(raw);
}
