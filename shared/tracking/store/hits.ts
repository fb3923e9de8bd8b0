import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { TrackingRecord } from '../../messages/index.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import type { TrackedMessage } from './tracked-message.ts';

/**
 * Opens and clicks (docs/tracking.md, "What is stored"): one item per message, recipient and kind
 * (`pk` the message's, `sk` `TRACK#open#<n>` / `TRACK#click#<n>`), updated once per hit: the hit
 * count, the first hit's time, the first human open's time and the latest hit's facts. Its table
 * stream record is the event (webhooks, statistics): the old image tells whether the hit was the
 * recipient's first. The item expires `TRACKING_RETENTION_DAYS` after the last hit.
 */
export type HitKind = 'open' | 'click';

export interface Hit {
  kind: HitKind;
  at: string;
  recipientIndex: number;
  recipient: string;
  userAgent: string;
  /** Truncated (/24, /48): a full address is never stored. */
  clientAddress: string | null;
  machineOpen: boolean;
  link?: { url: string; index: number };
}

/** A recipient's open or click record: the shape the messages wing reads back (`TrackingRecord`). */
export interface HitItem extends Pick<TrackingRecord, 'hits' | 'first_at' | 'human_first_at' | 'last'> {
  message_uuid: string;
  account_id: string;
  kind: HitKind;
  recipient: string;
  recipient_index: number;
  tenant: string;
  /** The message's stream (absent on records written before streams: transactional). */
  stream?: 'transactional' | 'broadcast';
  status: string;
  subject: string;
  tags: Array<{ name: string; value: string }>;
  metadata: Record<string, string>;
}

const prefix = 'TRACK#';

export const hitKey = (messageUuid: string, kind: HitKind, recipientIndex: number) => ({
  pk: keys.message(messageUuid).pk,
  sk: `${prefix}${kind}#${recipientIndex}`,
});

/** Records one hit with one write. */
export async function recordHit(message: TrackedMessage, hit: Hit, retentionDays: number): Promise<void> {
  const human = hit.kind === 'open' && !hit.machineOpen;
  const last = {
    at: hit.at,
    user_agent: hit.userAgent,
    client_address: hit.clientAddress,
    machine_open: hit.machineOpen,
    ...(hit.link === undefined ? {} : { link: hit.link.url, link_index: hit.link.index }),
  };
  await table.update({
    Key: hitKey(message.messageUuid, hit.kind, hit.recipientIndex),
    UpdateExpression: [
      'SET message_uuid = :uuid, account_id = :account, kind = :kind, recipient = :recipient,',
      'recipient_index = :index, tenant = :tenant, #stream = :stream, #status = :status, subject = :subject, tags = :tags,',
      'metadata = :metadata, #last = :last, first_at = if_not_exists(first_at, :at), expires_at = :expires',
      human ? ', human_first_at = if_not_exists(human_first_at, :at)' : '',
      'ADD hits :one',
    ].join(' '),
    ExpressionAttributeNames: { '#status': 'status', '#last': 'last', '#stream': 'stream' },
    ExpressionAttributeValues: {
      ':uuid': message.messageUuid,
      ':account': message.accountId,
      ':kind': hit.kind,
      ':recipient': hit.recipient,
      ':index': hit.recipientIndex,
      ':tenant': message.tenant,
      ':stream': message.stream,
      ':status': message.status,
      ':subject': message.subject,
      ':tags': message.tags,
      ':metadata': message.metadata,
      ':last': last,
      ':at': hit.at,
      ':expires': Math.floor(Date.parse(hit.at) / 1000) + retentionDays * 86_400,
      ':one': 1,
    },
  });
}

function isHitItem(item: Record<string, unknown>): item is HitItem & Record<string, unknown> {
  return (
    typeof item.sk === 'string' &&
    item.sk.startsWith(prefix) &&
    typeof item.message_uuid === 'string' &&
    typeof item.account_id === 'string' &&
    (item.kind === 'open' || item.kind === 'click') &&
    typeof item.first_at === 'string' &&
    typeof item.last === 'object' &&
    item.last !== null
  );
}

/** A hit record from a table stream image; undefined for any other item. */
export function hitItemOf(image: Record<string, AttributeValue> | undefined): HitItem | undefined {
  if (image === undefined) return undefined;
  const item = unmarshall(image) as Record<string, unknown>;
  return isHitItem(item) ? item : undefined;
}
