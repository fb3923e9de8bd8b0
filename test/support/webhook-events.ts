import { randomUUID } from 'node:crypto';
import { type DeliveryJob, putEvent } from '../../shared/repositories/webhooks.ts';
import { mapLimit } from './messages.ts';

/**
 * Stored webhook events of an account, as the fan-out stores them (kept an hour), for tests that
 * feed the webhook queue themselves: `count` `message.delivered` events with distinct ids.
 */
export async function storeTestEvents(accountId: string, count: number, concurrency = 1): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `evt_${randomUUID().replaceAll('-', '')}`);
  await mapLimit(ids, concurrency, (eventId, index) =>
    putEvent(
      {
        eventId,
        accountId,
        type: 'message.delivered',
        messageUuid: randomUUID(),
        body: JSON.stringify({ type: 'message.delivered', n: index }),
        createdAt: new Date().toISOString(),
      },
      Math.floor(Date.now() / 1000) + 3600,
    ),
  );
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
