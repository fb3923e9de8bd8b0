import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { eventRetentionSeconds } from '../../config/webhooks.ts';
import { deriveEndpointEvents, endpointEventBody } from '../../domain/webhooks/endpoint-events.ts';
import { deriveEvents, eventBody, subscribes, type WebhookEventType } from '../../domain/webhooks/events.ts';
import { describeError, log } from '../../observability/log.ts';
import { messageSnapshotOf } from '../../repositories/message-stream.ts';
import {
  type DeliveryJob,
  endpointSnapshotOf,
  enqueueDeliveries,
  listEndpoints,
  putEvent,
  type StoredEndpoint,
} from '../../repositories/webhooks.ts';
import { formatDate } from '../../time/format.ts';

/**
 * The table stream's consumer (docs/webhooks.md, "Events"): every committed change of a message
 * item is diffed into events, and an endpoint item that became disabled into `webhook.disabled`;
 * each event is stored (7 days, for replays) and fanned out as one queue job per enabled endpoint
 * of the account that subscribed to its type. The stream is the
 * outbox: nothing that was written can be missed, and a failed record is reported in
 * `batchItemFailures` so the stream hands it (and what follows it) over again. Ids are derived from
 * the change, so doing a record twice stores nothing new; its jobs may repeat (at least once).
 */
type Image = Record<string, AttributeValue>;

export async function fanOutStreamBatch(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const endpoints = new Map<string, Promise<StoredEndpoint[]>>();
  const endpointsOf = (accountId: string) => {
    let found = endpoints.get(accountId);
    if (found === undefined) {
      found = listEndpoints(accountId).then((list) => list.filter((endpoint) => endpoint.enabled));
      endpoints.set(accountId, found);
    }
    return found;
  };
  const results = await Promise.allSettled(event.Records.map((record) => fanOutRecord(record, endpointsOf)));
  // The stream resumes from the first failed record (its later records are done again, harmlessly).
  const firstFailure = results.findIndex((result) => result.status === 'rejected');
  if (firstFailure === -1) return { batchItemFailures: [] };
  const record = event.Records[firstFailure] as DynamoDBRecord;
  const reason = (results[firstFailure] as PromiseRejectedResult).reason;
  log('warn', 'webhook fan-out failed; the stream will retry', {
    sequence_number: record.dynamodb?.SequenceNumber,
    ...describeError(reason),
  });
  return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
}

async function fanOutRecord(
  record: DynamoDBRecord,
  endpointsOf: (accountId: string) => Promise<StoredEndpoint[]>,
): Promise<void> {
  if (record.eventName === 'REMOVE') return;
  const after = messageSnapshotOf(record.dynamodb?.NewImage as Image | undefined);
  if (after === undefined) return fanOutEndpointRecord(record, endpointsOf);
  const before = messageSnapshotOf(record.dynamodb?.OldImage as Image | undefined);
  const events = deriveEvents(before, after);
  if (events.length === 0) return;
  const endpoints = await endpointsOf(after.accountId);
  if (endpoints.length === 0) return;
  await fanOut(
    events.map((event) => ({ ...event, body: eventBody(event, formatDate) })),
    endpoints,
    { message_uuid: after.messageUuid },
  );
}

/** An endpoint disabled (410 Gone, or days of failures): `webhook.disabled` to the account's others. */
async function fanOutEndpointRecord(
  record: DynamoDBRecord,
  endpointsOf: (accountId: string) => Promise<StoredEndpoint[]>,
): Promise<void> {
  const after = endpointSnapshotOf(record.dynamodb?.NewImage as Image | undefined);
  if (after === undefined) return;
  const events = deriveEndpointEvents(
    endpointSnapshotOf(record.dynamodb?.OldImage as Image | undefined),
    after,
  );
  if (events.length === 0) return;
  const others = (await endpointsOf(after.accountId)).filter(
    (endpoint) => endpoint.webhookId !== after.webhookId,
  );
  await fanOut(
    events.map((event) => ({ ...event, body: endpointEventBody(event, formatDate) })),
    others,
    { webhook_id: after.webhookId },
  );
}

/** An event as it is stored and sent: its id, type, account, message (if any) and exact body. */
interface OutgoingEvent {
  id: string;
  type: WebhookEventType;
  accountId: string;
  messageUuid?: string;
  body: string;
}

/** Stores each event some endpoint subscribes to, and queues one job per such endpoint. */
async function fanOut(
  events: readonly OutgoingEvent[],
  endpoints: readonly StoredEndpoint[],
  about: Record<string, string>,
): Promise<void> {
  const jobs: DeliveryJob[] = [];
  const nowMs = Date.now();
  for (const event of events) {
    const targets = endpoints.filter((endpoint) => subscribes(endpoint.events, event.type));
    if (targets.length === 0) continue;
    await putEvent(
      {
        eventId: event.id,
        accountId: event.accountId,
        type: event.type,
        ...(event.messageUuid === undefined ? {} : { messageUuid: event.messageUuid }),
        body: event.body,
        createdAt: new Date(nowMs).toISOString(),
      },
      Math.floor(nowMs / 1000) + eventRetentionSeconds,
    );
    for (const endpoint of targets) {
      jobs.push({
        account_id: event.accountId,
        webhook_id: endpoint.webhookId,
        event_id: event.id,
        attempt: 1,
        due_at: nowMs,
      });
    }
  }
  await enqueueDeliveries(jobs);
  if (jobs.length > 0) {
    log('info', 'webhook events fanned out', {
      ...about,
      events: events.map((item) => item.type),
      jobs: jobs.length,
    });
  }
}
