import { inboundExampleSummary } from '../../inbound/index.ts';
import type { MessageStatus } from '../../messages/index.ts';
import { reportedStatus } from '../../messages/index.ts';
import { isDomainEventType } from './domain-events.ts';
import type { WebhookEventType } from './events.ts';

/**
 * The body of a test event (POST /webhook/test-1.0, docs/webhooks.md "Test events"): a body of the
 * asked type shaped exactly like a real one, so a receiver's parser and signature check meet what
 * they will meet later. It is about no real message: the all-zero uuid and the `test` metadata say
 * so. Pure.
 */
export const sampleMessageUuid = '00000000-0000-0000-0000-000000000000';

/** The message's status a real event of each type carries. */
const messageStatusAfter: Record<Exclude<keyof typeof reportedStatus, 'message.cancelled'>, MessageStatus> = {
  'message.sent': 'sent',
  'message.delivered': 'delivered',
  'message.bounced': 'bounced',
  'message.complained': 'delivered',
  'message.delayed': 'sent',
  'message.failed': 'failed',
  'message.suppressed': 'suppressed',
  'recipient.unsubscribed': 'delivered',
  'message.opened': 'delivered',
  'message.clicked': 'delivered',
};

/** What a test open or click carries besides the message (docs/tracking.md). */
const sampleTracking: Partial<Record<WebhookEventType, Record<string, unknown>>> = {
  'message.opened': {
    first: true,
    user_agent: 'Mozilla/5.0 (test event)',
    client_address: '192.0.2.0/24',
    machine_open: false,
  },
  'message.clicked': {
    first: true,
    user_agent: 'Mozilla/5.0 (test event)',
    client_address: '192.0.2.0/24',
    machine_open: false,
    link: 'https://example.org/test-event',
    link_index: 0,
  },
};

const sampleDetail: Partial<Record<WebhookEventType, string>> = {
  'message.delivered': '250 2.0.0 Ok: queued (test event)',
  'message.bounced': '550 5.1.1 User unknown (test event)',
  'message.delayed': '451 4.7.1 Try again later (test event)',
  'message.failed': 'Test event: the recipient will not get it',
};

export function sampleEventBody(
  type: WebhookEventType,
  webhookId: string,
  url: string,
  timestamp: string,
): string {
  const message = {
    message_uuid: sampleMessageUuid,
    subject: 'Test event',
    tags: [{ name: 'test', value: 'true' }],
    metadata: { test: 'true' },
  };
  if (type === 'message.cancelled') {
    return JSON.stringify({
      type,
      timestamp,
      data: {
        message_uuid: message.message_uuid,
        status: 'cancelled',
        recipient: null,
        subject: message.subject,
        tags: message.tags,
        metadata: message.metadata,
        stream: 'transactional',
      },
    });
  }
  if (type === 'inbound.received') {
    return JSON.stringify({
      type,
      timestamp,
      data: { ...inboundExampleSummary, received_at: timestamp, subject: 'Test event', attachments: [] },
    });
  }
  if (type === 'key.created' || type === 'key.rotated' || type === 'key.revoked') {
    return JSON.stringify({
      type,
      timestamp,
      data: { key_id: 'testtesttesttest', name: 'Test event', prefix: 'svc_live_testtesttesttest' },
    });
  }
  if (isDomainEventType(type)) {
    return JSON.stringify({
      type,
      timestamp,
      data: { domain: 'example.test', status: type.slice('domain.'.length) },
    });
  }
  if (type === 'webhook.disabled') {
    return JSON.stringify({
      type,
      timestamp,
      data: { webhook_id: webhookId, url, reason: 'Test event: nothing was disabled' },
    });
  }
  return JSON.stringify({
    type,
    timestamp,
    data: {
      message_uuid: message.message_uuid,
      status: messageStatusAfter[type],
      recipient: {
        email: 'test@example.org',
        status: reportedStatus[type],
        detail: sampleDetail[type] ?? null,
      },
      subject: message.subject,
      tags: message.tags,
      metadata: message.metadata,
      stream: type === 'recipient.unsubscribed' ? 'broadcast' : 'transactional',
      ...sampleTracking[type],
    },
  });
}
