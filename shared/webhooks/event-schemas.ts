import * as z from 'zod/mini';
import { inboundExampleSummary, inboundSummary } from '../inbound/index.ts';
import {
  type MessageEventType,
  messageEventTypes,
  messageStatuses,
  reportedStatus,
} from '../messages/index.ts';
import type { Example } from '../platform/http/route.ts';
import { serverDate } from '../platform/schemas/dates.ts';
import { describe } from '../platform/schemas/describe.ts';
import { webhookId } from './schemas.ts';

/**
 * The bodies of webhook deliveries (docs/webhooks.md, "Events"): what a receiver gets as the JSON of
 * each signed POST. They are built by hand by the domain (`eventBody` in
 * shared/webhooks/model/events.ts, `endpointEventBody` in shared/webhooks/model/endpoint-events.ts,
 * `inboundReceivedEvent` in shared/webhooks/model/inbound-event.ts); these schemas describe those bodies field
 * for field, and are the single source of the `WebhookEvent` components of the OpenAPI document
 * (infra/openapi/build.ts) and of the typed client's types. The tests check every body the webhook
 * receiver of the integration tests gets against the published components
 * (test/support/webhook-receiver.ts), and every body the domain builds (test/unit/webhooks.test.ts).
 *
 * Output schemas (`z.object`): the OpenAPI document gets them with `additionalProperties: false`, so an
 * extra, missing or renamed field in a real body is a contract violation.
 */

/** The message events that report one recipient; `message.cancelled` is once per message, without one. */
const recipientEventTypes = messageEventTypes.filter(
  (type): type is Exclude<MessageEventType, 'message.cancelled' | TrackingEventType> =>
    type !== 'message.cancelled' && type !== 'message.opened' && type !== 'message.clicked',
);

type TrackingEventType = 'message.opened' | 'message.clicked';

const timestamp = serverDate(
  'When the change happened, in the server time zone (the webhook-timestamp header is the time of the attempt)',
  '2026-11-23T10:58:40.648+00:00',
);

const tag = z.object({
  name: describe(z.string(), 'The tag name', 'category'),
  value: describe(z.string(), 'The tag value', 'shipping'),
});

const stream = describe(
  z.enum(['transactional', 'broadcast']),
  "The message's stream (docs/streams.md)",
  'transactional',
);

/** What every message event carries about its message, in the order of the body. */
const messageUuid = describe(z.string(), 'The message', '2a52b27c-0980-473f-96bc-aa7afca8d390');
const messageStatus = describe(z.enum(messageStatuses), "The message's status after the change");
const subject = describe(
  z.string(),
  "The message's subject (empty when it has none)",
  'Your order has shipped',
);
const tags = describe(z.array(tag), "The message's tags as given when it was accepted; [] when it has none", [
  { name: 'category', value: 'shipping' },
]);
const metadata = describe(
  z.record(z.string(), z.string()),
  "The message's metadata as given when it was accepted; {} when it has none",
  { order_id: '4711' },
);

export const messageEvent = describe(
  z.object({
    type: describe(
      z.enum(recipientEventTypes),
      "message.sent: the relay accepted it for the recipient; message.delivered: the recipient's server accepted it; message.bounced: a permanent refusal; message.complained: a complaint (SES); message.delayed: a delivery delay (SES); message.failed: the recipient will not get it; message.suppressed: the recipient is on the suppression list, nothing was sent; recipient.unsubscribed: the recipient used the one-click unsubscribe of a broadcast (docs/streams.md)",
      'message.delivered',
    ),
    timestamp,
    data: z.object({
      message_uuid: messageUuid,
      status: messageStatus,
      recipient: describe(
        z.object({
          email: describe(z.string(), 'The recipient', 'ada@example.org'),
          status: describe(
            z.enum(recipientEventTypes.map((type) => reportedStatus[type])),
            'What the event reports for the recipient: the part of `type` after `message.` (or `recipient.`)',
            'delivered',
          ),
          detail: describe(
            z.nullable(z.string()),
            "The receiving side's answer (SMTP reply, or SES bounce or delay diagnostic), or null",
            '250 2.0.0 Ok',
          ),
        }),
        'The recipient the event is about',
      ),
      subject,
      tags,
      metadata,
      stream,
    }),
  }),
  "An event about one recipient of a message: one per recipient and change. Its data carries the message's uuid, status, subject, tags and metadata, so a receiver can route it without looking the message up.",
);

export const messageCancelledEvent = describe(
  z.object({
    type: describe(z.literal('message.cancelled'), 'manual-cancel cancelled the message'),
    timestamp,
    data: z.object({
      message_uuid: messageUuid,
      status: messageStatus,
      recipient: describe(z.null(), 'Always null: the event is about the whole message'),
      subject,
      tags,
      metadata,
      stream,
    }),
  }),
  'A message was cancelled (manual-cancel): once per message, with no recipient.',
);

/** What an open and a click carry besides the message (docs/tracking.md). */
const trackingFacts = {
  first: describe(
    z.boolean(),
    "Whether this is the recipient's first open (or first click) of the message",
    true,
  ),
  user_agent: describe(z.string(), "The mail client's or proxy's User-Agent ('' when none)", 'Mozilla/5.0'),
  client_address: describe(
    z.nullable(z.string()),
    "The client's network: the address truncated to its /24 (IPv4) or /48 (IPv6); a full address is never stored",
    '198.51.100.0/24',
  ),
  machine_open: describe(
    z.boolean(),
    "True when the hit came from a mail provider's image proxy or privacy relay (Apple Mail Privacy Protection, Google's image proxy) or a prefetch on delivery, not from a person reading",
    false,
  ),
};

const trackingRecipient = (status: 'opened' | 'clicked') =>
  describe(
    z.object({
      email: describe(z.string(), 'The recipient', 'ada@example.org'),
      status: describe(z.literal(status), 'The part of `type` after `message.`'),
      detail: describe(z.null(), 'Always null'),
    }),
    'The recipient who opened or clicked',
  );

export const messageOpenedEvent = describe(
  z.object({
    type: describe(
      z.literal('message.opened'),
      "A recipient's mail client (or its provider's proxy) loaded the open pixel",
    ),
    timestamp,
    data: z.object({
      message_uuid: messageUuid,
      status: messageStatus,
      recipient: trackingRecipient('opened'),
      subject,
      stream,
      tags,
      metadata,
      ...trackingFacts,
    }),
  }),
  'An open of a message with open tracking (docs/tracking.md): one per open, first and repeated.',
);

export const messageClickedEvent = describe(
  z.object({
    type: describe(z.literal('message.clicked'), 'A recipient followed a tracked link'),
    timestamp,
    data: z.object({
      message_uuid: messageUuid,
      status: messageStatus,
      recipient: trackingRecipient('clicked'),
      subject,
      stream,
      tags,
      metadata,
      ...trackingFacts,
      link: describe(
        z.string(),
        'The URL the click was sent on to, as the message holds it',
        'https://shop.example/orders/4711',
      ),
      link_index: describe(z.number(), "The link's position among the message's tracked links, from 0", 0),
    }),
  }),
  'A click on a tracked link of a message (docs/tracking.md): one per click, first and repeated.',
);

export const inboundReceivedEvent = describe(
  z.object({
    type: describe(
      z.literal('inbound.received'),
      'A received message was stored for one of your receiving recipients',
    ),
    timestamp: serverDate(
      'When the mail was received (the same as data.received_at)',
      '2026-11-23T10:58:40.648+00:00',
    ),
    // A copy of the list entry's schema, so this description stays off the query route's schema.
    data: describe(
      z.extend(inboundSummary, {}),
      "The received message's metadata, as a list entry of POST /inbound/query-1.0 shows it (no bodies, headers or URLs: fetch them with inbound_uuid)",
    ),
  }),
  'A received message was stored: one per received message and receiving recipient (docs/inbound.md).',
);

export const webhookDisabledEvent = describe(
  z.object({
    type: describe(z.literal('webhook.disabled'), 'Another endpoint of your account was disabled'),
    timestamp: serverDate('When the endpoint was disabled', '2026-11-23T10:58:40.648+00:00'),
    data: z.object({
      webhook_id: webhookId,
      url: describe(z.string(), 'Its URL', 'https://hooks.example.com/svc-mail'),
      reason: describe(
        z.string(),
        'Why: the receiver answered 410 Gone, or it failed for 5 days without a successful delivery',
        'The receiver answered 410 Gone',
      ),
    }),
  }),
  'One of your endpoints was disabled (410 Gone, or 5 days of failures); sent to your other enabled endpoints that subscribe to it.',
);

export const apiKeyEvent = describe(
  z.object({
    type: describe(
      z.enum(['key.created', 'key.rotated', 'key.revoked']),
      'An API key of your account was made, given a new secret, or revoked',
    ),
    timestamp: serverDate('When it happened', '2026-11-23T10:58:40.648+00:00'),
    data: z.object({
      key_id: describe(z.string(), 'The key id', 'k3y5abcdefgh2345'),
      name: describe(z.string(), 'Its name', 'Production app'),
      prefix: describe(z.string(), 'The start of the key, never its secret', 'svc_live_k3y5abcdefgh2345'),
    }),
  }),
  'An API key of your account was made (key.created), rotated (key.rotated) or revoked (key.revoked).',
);
export const domainEvent = describe(
  z.object({
    type: describe(
      z.enum(['domain.verified', 'domain.temporary_failure', 'domain.failed', 'domain.claimed']),
      'A domain’s status changed (docs/domains.md)',
    ),
    timestamp: serverDate('When the check (or the claim) happened', '2026-11-23T10:58:40.648+00:00'),
    data: z.object({
      domain: describe(z.string(), 'The domain', 'example.test'),
      status: describe(
        z.enum(['verified', 'temporary_failure', 'failed', 'claimed']),
        'Its new status; claimed: another account proved it holds the domain, which left your account',
      ),
    }),
  }),
  'A domain was verified, lost a record (temporary_failure), failed, or was claimed by another account.',
);

/**
 * Every body a receiver may get, by name: the OpenAPI components of the same names, in this order,
 * are the members of `WebhookEvent`.
 */
export const webhookEventSchemas = {
  MessageEvent: messageEvent,
  MessageCancelledEvent: messageCancelledEvent,
  MessageOpenedEvent: messageOpenedEvent,
  MessageClickedEvent: messageClickedEvent,
  InboundReceivedEvent: inboundReceivedEvent,
  WebhookDisabledEvent: webhookDisabledEvent,
  ApiKeyEvent: apiKeyEvent,
  DomainEvent: domainEvent,
} as const;

export const webhookEvent = describe(
  z.discriminatedUnion('type', [
    messageEvent,
    messageCancelledEvent,
    messageOpenedEvent,
    messageClickedEvent,
    inboundReceivedEvent,
    webhookDisabledEvent,
    apiKeyEvent,
    domainEvent,
  ]),
  'The JSON body of a webhook delivery (a signed POST, Standard Webhooks v1), told apart by `type`. The same bytes on every retry and replay.',
);

export type WebhookEventBody = z.infer<typeof webhookEvent>;

const exampleAt = '2026-11-23T10:58:40.648+00:00';

/** One example body of each kind (the OpenAPI document shows them; Redocly and a test check them). */
export const webhookEventExamples: Record<string, Example> = {
  delivered: {
    summary: 'message.delivered',
    value: {
      type: 'message.delivered',
      timestamp: exampleAt,
      data: {
        message_uuid: '2a52b27c-0980-473f-96bc-aa7afca8d390',
        status: 'delivered',
        recipient: { email: 'ada@example.org', status: 'delivered', detail: '250 2.0.0 Ok' },
        subject: 'Your order has shipped',
        tags: [{ name: 'category', value: 'shipping' }],
        metadata: { order_id: '4711' },
        stream: 'transactional',
      },
    },
  },
  unsubscribed: {
    summary: 'recipient.unsubscribed',
    value: {
      type: 'recipient.unsubscribed',
      timestamp: exampleAt,
      data: {
        message_uuid: '2a52b27c-0980-473f-96bc-aa7afca8d390',
        status: 'delivered',
        recipient: {
          email: 'ada@example.org',
          status: 'unsubscribed',
          detail: 'ada@example.org: One-click unsubscribe (RFC 8058)',
        },
        subject: 'This week at the shop',
        tags: [],
        metadata: {},
        stream: 'broadcast',
      },
    },
  },
  cancelled: {
    summary: 'message.cancelled',
    value: {
      type: 'message.cancelled',
      timestamp: exampleAt,
      data: {
        message_uuid: '2a52b27c-0980-473f-96bc-aa7afca8d390',
        status: 'cancelled',
        recipient: null,
        subject: 'Your order has shipped',
        tags: [],
        metadata: {},
        stream: 'transactional',
      },
    },
  },
  opened: {
    summary: 'message.opened',
    value: {
      type: 'message.opened',
      timestamp: exampleAt,
      data: {
        message_uuid: '2a52b27c-0980-473f-96bc-aa7afca8d390',
        status: 'delivered',
        recipient: { email: 'ada@example.org', status: 'opened', detail: null },
        subject: 'Your order has shipped',
        stream: 'transactional',
        tags: [{ name: 'category', value: 'shipping' }],
        metadata: { order_id: '4711' },
        first: true,
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.0',
        client_address: '198.51.100.0/24',
        machine_open: false,
      },
    },
  },
  clicked: {
    summary: 'message.clicked',
    value: {
      type: 'message.clicked',
      timestamp: exampleAt,
      data: {
        message_uuid: '2a52b27c-0980-473f-96bc-aa7afca8d390',
        status: 'delivered',
        recipient: { email: 'ada@example.org', status: 'clicked', detail: null },
        subject: 'Your order has shipped',
        stream: 'transactional',
        tags: [{ name: 'category', value: 'shipping' }],
        metadata: { order_id: '4711' },
        first: true,
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
        client_address: '2001:db8:1::/48',
        machine_open: false,
        link: 'https://shop.example/orders/4711',
        link_index: 0,
      },
    },
  },
  inbound: {
    summary: 'inbound.received',
    value: {
      type: 'inbound.received',
      timestamp: exampleAt,
      data: {
        ...inboundExampleSummary,
        received_at: exampleAt,
        attachments: [{ filename: 'receipt.pdf', content_type: 'application/pdf', size: 20411 }],
      },
    },
  },
  disabled: {
    summary: 'webhook.disabled',
    value: {
      type: 'webhook.disabled',
      timestamp: exampleAt,
      data: {
        webhook_id: 'wh_5f0c6a1e2b3d4c5e6f708192',
        url: 'https://hooks.example.com/svc-mail',
        reason: 'The receiver answered 410 Gone',
      },
    },
  },
  keyRevoked: {
    summary: 'key.revoked',
    value: {
      type: 'key.revoked',
      timestamp: exampleAt,
      data: { key_id: 'k3y5abcdefgh2345', name: 'Production app', prefix: 'svc_live_k3y5abcdefgh2345' },
    },
  },
  domainVerified: {
    summary: 'domain.verified',
    value: {
      type: 'domain.verified',
      timestamp: exampleAt,
      data: { domain: 'example.test', status: 'verified' },
    },
  },
};
