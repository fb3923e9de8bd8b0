import { keyEventTypes } from '../../apikeys/index.ts';
import { type MessageChange, messageEventTypes } from '../../messages/index.ts';
import { domainEventTypes } from './domain-events.ts';

/**
 * Webhook events (docs/webhooks.md): every change of a message (`MessageChange`, from the messages
 * wing), `inbound.received` (./inbound-event.ts), `webhook.disabled` (./endpoint-events.ts) and the
 * API key events (./key-event.ts).
 */
export const webhookEventTypes = [
  ...messageEventTypes,
  'inbound.received',
  'webhook.disabled',
  ...keyEventTypes,
  ...domainEventTypes,
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return (webhookEventTypes as readonly unknown[]).includes(value);
}

/** The body of a delivery (JSON, compact), with `timestamp` formatted by the caller's clock format. */
export function eventBody(event: MessageChange, formatDate: (iso: string) => string): string {
  return JSON.stringify({
    type: event.type,
    timestamp: formatDate(event.at),
    data: {
      message_uuid: event.messageUuid,
      status: event.messageStatus,
      recipient: event.recipient,
      subject: event.subject,
      tags: event.tags,
      metadata: event.metadata,
      stream: event.stream,
      ...event.extra,
    },
  });
}

/** Whether an endpoint subscribed to `events` receives an event of `type`. */
export function subscribes(events: readonly string[], type: WebhookEventType): boolean {
  return events.includes(type);
}
