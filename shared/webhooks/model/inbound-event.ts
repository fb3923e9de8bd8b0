import { type InboundItem, inboundSummaryView } from '../../inbound/index.ts';
import { eventIdOf } from '../../messages/index.ts';
import { formatDate } from '../../platform/time/format.ts';

/**
 * The `inbound.received` webhook event (docs/webhooks.md, docs/inbound.md): one per stored
 * received message, derived from the item's creation on the table stream. Metadata only: the
 * bodies, headers and URLs are fetched with `POST /inbound/query-1.0` and `data.inbound_uuid`.
 */
export const inboundReceivedType = 'inbound.received' as const;

export function inboundReceivedEvent(item: InboundItem): { id: string; at: string; body: string } {
  return {
    id: eventIdOf([item.inbound_uuid, inboundReceivedType]),
    at: item.received_at,
    body: JSON.stringify({
      type: inboundReceivedType,
      timestamp: formatDate(item.received_at),
      data: inboundSummaryView(item),
    }),
  };
}
