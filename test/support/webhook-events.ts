import { randomUUID } from 'node:crypto';
import { formatDate } from '../../shared/platform/time/format.ts';
import { eventBody } from '../../shared/webhooks/model/events.ts';
import { type DeliveryJob, putEvent } from '../../shared/webhooks/store/webhooks.ts';
import { mapLimit } from './messages.ts';

/**
 * Stored webhook events of an account, as the fan-out stores them (kept an hour), for tests that
 * feed the webhook queue themselves: `count` `message.delivered` events with distinct ids. Their
 * bodies are made by the domain's `eventBody`, as real ones, so the receiver's check of every body
 * against the published schema (test/support/webhook-receiver.ts) holds for them too.
 */
export async function storeTestEvents(accountId: string, count: number, concurrency = 1): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `evt_${randomUUID().replaceAll('-', '')}`);
  await mapLimit(ids, concurrency, (eventId, index) => {
    const messageUuid = randomUUID();
    const at = new Date().toISOString();
    const body = eventBody(
      {
        id: eventId,
        type: 'message.delivered',
        accountId,
        messageUuid,
        at,
        messageStatus: 'delivered',
        subject: `Test event ${index}`,
        recipient: { email: `event-${index}@recipient.test`, status: 'delivered', detail: null },
        tags: [],
        metadata: {},
        stream: 'transactional',
      },
      formatDate,
    );
    return putEvent(
      { eventId, accountId, type: 'message.delivered', messageUuid, body, createdAt: at },
      Math.floor(Date.now() / 1000) + 3600,
    );
  });
  return ids;
}

/** One first-attempt job per event and endpoint, as the fan-out queues them. */
export function jobsFor(
  accountId: string,
  eventIds: readonly string[],
  webhookIds: readonly string[],
): DeliveryJob[] {
  return eventIds.flatMap((eventId) =>
    webhookIds.map((webhookId) => ({
      account_id: accountId,
      webhook_id: webhookId,
      event_id: eventId,
      attempt: 1,
      due_at: Date.now(),
    })),
  );
}
