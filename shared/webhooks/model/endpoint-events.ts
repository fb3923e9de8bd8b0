import { eventIdOf } from '../../messages/index.ts';

/**
 * The `webhook.disabled` event (docs/webhooks.md, "Failing endpoints"): derived, like the message
 * events, from a committed change, here of an endpoint item whose `enabled` went from true to false
 * (410 Gone, or 5 days of failures). It goes to the account's other enabled endpoints that subscribe
 * to it, so the account learns that one of its receivers stopped getting events. Pure.
 */
export interface EndpointSnapshot {
  accountId: string;
  webhookId: string;
  url: string;
  enabled: boolean;
  disabledAt?: string;
  disabledReason?: string;
}

export interface EndpointEvent {
  id: string;
  type: 'webhook.disabled';
  accountId: string;
  /** The endpoint that was disabled (it receives nothing itself). */
  webhookId: string;
  at: string;
  url: string;
  reason: string;
}

export function deriveEndpointEvents(
  before: EndpointSnapshot | undefined,
  after: EndpointSnapshot,
): EndpointEvent[] {
  if (before?.enabled !== true || after.enabled) return [];
  const at = after.disabledAt ?? new Date(0).toISOString();
  return [
    {
      id: eventIdOf([after.webhookId, 'webhook.disabled', at]),
      type: 'webhook.disabled',
      accountId: after.accountId,
      webhookId: after.webhookId,
      at,
      url: after.url,
      reason: after.disabledReason ?? 'Disabled',
    },
  ];
}

/** The body of a delivery (JSON, compact), with `timestamp` formatted by the caller's clock format. */
export function endpointEventBody(event: EndpointEvent, formatDate: (iso: string) => string): string {
  return JSON.stringify({
    type: event.type,
    timestamp: formatDate(event.at),
    data: { webhook_id: event.webhookId, url: event.url, reason: event.reason },
  });
}
