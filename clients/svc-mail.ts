import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './openapi.ts';

/**
 * A typed client for the svc-mail API: openapi-fetch over the types that openapi-typescript
 * generates from docs/openapi.json (`npm run openapi` writes clients/openapi.ts). Paths, query
 * parameters, headers, bodies and both the `data` and the `error` answers are typed per operation.
 *
 *   const api = createSvcMailClient({ baseUrl: 'https://mail.example.com', token });
 *   const { data, error } = await api.POST('/message/add-1.0', { body: { … } });
 *   // up to 500 messages in one request, and a page of them found again by tag:
 *   await api.POST('/message/batch-1.0', { body: { messages: [{ … }, { … }] } });
 *   await api.POST('/message/query-1.0', { body: { filters: { tag: { name: 'category', value: 'receipt' } } } });
 *   // a newsletter: one recipient, with the one-click unsubscribe link and List-Unsubscribe headers
 *   await api.POST('/message/add-1.0', { body: { message_sender, to: ['ada@example.org'], stream: 'broadcast', … } });
 */
export type SvcMailClient = Client<paths>;

export interface SvcMailClientOptions extends ClientOptions {
  /** A Bearer token (JWT); sent as `Authorization: Bearer <token>` on every request. */
  token?: string;
}

export function createSvcMailClient({ token, headers, ...options }: SvcMailClientOptions): SvcMailClient {
  const merged = new Headers(headers as ConstructorParameters<typeof Headers>[0]);
  if (token !== undefined && !merged.has('authorization')) merged.set('authorization', `Bearer ${token}`);
  return createClient<paths>({ ...options, headers: merged });
}

export type { components, operations, paths };

/**
 * The JSON body of a webhook delivery (docs/webhooks.md; `WebhookEvent` in docs/openapi.json), for a
 * receiver: parse the verified body as one and switch on `type` to narrow `data`.
 *
 *   const event = JSON.parse(body) as WebhookEvent;
 *   if (event.type === 'inbound.received') fetchInbound(event.data.inbound_uuid);
 *   else if (event.type !== 'webhook.disabled') route(event.data.tags, event.data.metadata);
 */
export type WebhookEvent = components['schemas']['WebhookEvent'];
/**
 * `message.sent`, `.delivered`, `.bounced`, `.complained`, `.delayed`, `.failed`, `.suppressed` and
 * `recipient.unsubscribed`: one recipient each.
 */
export type MessageEvent = components['schemas']['MessageEvent'];
/** `message.cancelled`: once per message, `data.recipient` null. */
export type MessageCancelledEvent = components['schemas']['MessageCancelledEvent'];
/** `message.opened`: an open of a tracked message (docs/tracking.md), with `first` and `machine_open`. */
export type MessageOpenedEvent = components['schemas']['MessageOpenedEvent'];
/** `message.clicked`: a click on a tracked link, with `link` and `link_index`. */
export type MessageClickedEvent = components['schemas']['MessageClickedEvent'];
/** `inbound.received`: a received message's metadata. */
export type InboundReceivedEvent = components['schemas']['InboundReceivedEvent'];
/** `webhook.disabled`: another endpoint of the account was disabled. */
export type WebhookDisabledEvent = components['schemas']['WebhookDisabledEvent'];
/** Every event type an endpoint may receive. */
export type WebhookEventType = WebhookEvent['type'];
