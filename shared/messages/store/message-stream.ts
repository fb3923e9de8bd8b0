import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { keys } from '../../platform/table/keys.ts';
import type { HistorySnapshot, MessageLabels, MessageSnapshot, RecipientSnapshot } from '../model/changes.ts';
import type { Metadata, Tag } from '../model/labels.ts';
import { readState } from './message-state.ts';

/**
 * The one place that reads a message item's stored layout for the stream's consumers (webhook
 * events, statistics): a table stream image (DynamoDB JSON) → the snapshot the pure event rules
 * work on. Undefined for any other item (domains, keys, events, …). If the message item's layout
 * changes, only this module changes.
 */
export function messageSnapshotOf(
  image: Record<string, AttributeValue> | undefined,
): MessageSnapshot | undefined {
  return image === undefined ? undefined : snapshotOfItem(unmarshall(image) as Record<string, unknown>);
}

function snapshotOfItem(item: Record<string, unknown>): MessageSnapshot | undefined {
  const uuid = item.message_uuid;
  if (typeof uuid !== 'string' || typeof item.account_id !== 'string') return undefined;
  const key = keys.message(uuid);
  if (item.pk !== key.pk || item.sk !== key.sk) return undefined;
  const { state } = readState(item);
  const recipients: RecipientSnapshot[] = (
    state.recipients as unknown as Array<Record<string, unknown>>
  ).flatMap((raw) =>
    typeof raw?.email === 'string' && typeof raw.status === 'string'
      ? [
          {
            email: raw.email,
            status: raw.status,
            ...(typeof raw.detail === 'string' ? { detail: raw.detail } : {}),
            ...(typeof raw.updated_at === 'string' ? { updatedAt: raw.updated_at } : {}),
          },
        ]
      : [],
  );
  const history: HistorySnapshot[] = (state.history as unknown as Array<Record<string, unknown>>).flatMap(
    (raw) =>
      typeof raw?.status === 'string' && typeof raw.at === 'string'
        ? [
            {
              status: raw.status,
              at: raw.at,
              ...(typeof raw.detail === 'string' ? { detail: raw.detail } : {}),
              ...(typeof raw.recipient === 'string' ? { recipient: raw.recipient } : {}),
            },
          ]
        : [],
  );
  const tags: Tag[] = (Array.isArray(item.tags) ? item.tags : []).flatMap((raw: Record<string, unknown>) =>
    typeof raw?.name === 'string' && typeof raw.value === 'string'
      ? [{ name: raw.name, value: raw.value }]
      : [],
  );
  const metadata: Metadata = {};
  if (item.metadata !== null && typeof item.metadata === 'object' && !Array.isArray(item.metadata)) {
    for (const [key, value] of Object.entries(item.metadata))
      if (typeof value === 'string') metadata[key] = value;
  }
  return {
    messageUuid: uuid,
    accountId: item.account_id,
    status: String(item.status ?? ''),
    subject: typeof item.subject === 'string' ? item.subject : '',
    recipients,
    history,
    tags,
    metadata,
    ...(item.stream === 'broadcast' ? { stream: 'broadcast' as const } : {}),
  };
}

/**
 * What a message is counted under (docs/stats.md): its account, sending domain, tags and creation
 * time, from a stream image. Undefined for any item that is not a message.
 */
export function messageLabelsOf(
  image: Record<string, AttributeValue> | undefined,
): (MessageLabels & { accountId: string }) | undefined {
  if (image === undefined) return undefined;
  const item = unmarshall(image) as Record<string, unknown>;
  const snapshot = snapshotOfItem(item);
  if (snapshot === undefined) return undefined;
  return {
    accountId: snapshot.accountId,
    tenant: typeof item.tenant === 'string' ? item.tenant : '',
    tags: snapshot.tags,
    stream: snapshot.stream ?? 'transactional',
    createdAt: typeof item.created_at === 'string' ? item.created_at : (snapshot.history[0]?.at ?? ''),
  };
}
