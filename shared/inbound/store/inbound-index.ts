import { accountShardOf, keys } from '../../platform/table/keys.ts';

/**
 * The index attributes of a received message, written once with the item (it never changes):
 * its account's list (gsi2), its recipient's (gsi1) and its sender's (gsi3), each spread over the
 * account shards by the uuid, and all sorted by `<received_at>#<uuid>` (gsi1sk, which gsi2 shares).
 */
export function inboundIndexAttributes(item: {
  inbound_uuid: string;
  account_id: string;
  received_at: string;
  recipient: string;
  sender?: string;
}): Record<string, string> {
  const shard = accountShardOf(item.inbound_uuid);
  const sortKey = `${item.received_at}#${item.inbound_uuid}`;
  return {
    gsi1sk: sortKey,
    gsi1pk: keys.inboundToRecipient(item.account_id, item.recipient.toLowerCase(), shard),
    gsi2pk: keys.inboundOfAccount(item.account_id, shard),
    ...(item.sender === undefined
      ? {}
      : {
          gsi3pk: keys.inboundFromSender(item.account_id, item.sender.toLowerCase(), shard),
          gsi3sk: sortKey,
        }),
  };
}
