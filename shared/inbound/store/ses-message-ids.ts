import { batchGetItems } from '../../platform/table/batch-get.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';

/**
 * Which message Amazon SES sent under which id (docs/data-model.md, "SES message id"). SES replaces
 * the Message-ID of what it sends with `<SES id@…amazonses.com>`, so a reply names SES's id, not the
 * message uuid: this small item, written by the sender after SES accepted a message from a receiving
 * domain, lets the inbound function thread that reply. Written once, never changed; TTL `expires_at`.
 */
export interface SesMessageIdRecord {
  ses_message_id: string;
  account_id: string;
  message_uuid: string;
  /** The message's sending domain (its `tenant`). */
  tenant: string;
  /** Epoch seconds (TTL). */
  expires_at: number;
}

/**
 * Writes the record unless it exists: a repeated call for the same SES id (a retried step) writes
 * nothing and is not an error. False when it existed.
 */
export async function putSesMessageId(record: SesMessageIdRecord): Promise<boolean> {
  const result = await table.put({
    Item: { ...keys.sesMessageId(record.ses_message_id), ...record },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  return result.outcome === 'applied';
}

/** The records of these SES ids that exist and have not expired, by SES id. */
export async function getSesMessageIds(
  sesMessageIds: readonly string[],
  nowMs: number = Date.now(),
): Promise<Map<string, SesMessageIdRecord>> {
  const found = new Map<string, SesMessageIdRecord>();
  if (sesMessageIds.length === 0) return found;
  const now = Math.floor(nowMs / 1000);
  for (const item of await batchGetItems(sesMessageIds.map((id) => keys.sesMessageId(id)))) {
    // TTL removes an expired item within days, not at once: it counts as gone.
    if (Number(item.expires_at) < now) continue;
    found.set(String(item.ses_message_id), {
      ses_message_id: String(item.ses_message_id),
      account_id: String(item.account_id),
      message_uuid: String(item.message_uuid),
      tenant: String(item.tenant),
      expires_at: Number(item.expires_at),
    });
  }
  return found;
}
