import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { eventRetentionSeconds } from '../../config/webhooks.ts';
import { inboundReceivedEvent, inboundReceivedType } from '../../domain/inbound/event.ts';
import {
  deriveEvents,
  eventBody,
  subscribes,
  type WebhookEvent,
  type WebhookEventType,
} from '../../domain/webhooks/events.ts';
import { describeError, log } from '../../observability/log.ts';
import { inboundItemOf } from '../../repositories/inbound.ts';
import { messageSnapshotOf } from '../../repositories/message-stream.ts';
import {
  type DeliveryJob,
  enqueueDeliveries,
  listEndpoints,
  putEvent,
  type StoredEndpoint,
} from '../../repositories/webhooks.ts';
import { formatDate } from '../../time/format.ts';

/**
 * The table stream's consumer (docs/webhooks.md, "Events"): every committed change of a message
 * item is diffed into events, and every received message's new item is an `inbound.received`; each event is stored (7 days, for replays) and fanned out as one
 * queue job per enabled endpoint of the account that subscribed to its type. The stream is the
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

/** One event to store and deliver, its body already built. */
interface OutgoingEvent {
  id: string;
  type: WebhookEventType;
  body: string;
  /** What the event is about: a sent message or a received one. */
  about: { messageUuid: string } | { inboundUuid: string };
}

/**
 * The events one committed change produced: a message item's status changes (diffed), or the
 * creation of a received message's item (`inbound.received`, once: later writes are no events).
 */
function eventsOf(
  record: DynamoDBRecord,
): { accountId: string; logFields: Record<string, string>; events: OutgoingEvent[] } | undefined {
  const newImage = record.dynamodb?.NewImage as Image | undefined;
  const inbound = inboundItemOf(newImage);
  if (inbound !== undefined) {
    if (record.eventName !== 'INSERT') return undefined;
    const received = inboundReceivedEvent(inbound);
    return {
      accountId: inbound.account_id,
      logFields: { inbound_uuid: inbound.inbound_uuid },
      events: [
        {
          id: received.id,
          type: inboundReceivedType,
          body: received.body,
          about: { inboundUuid: inbound.inbound_uuid },
        },
      ],
    };
  }
  const after = messageSnapshotOf(newImage);
  if (after === undefined) return undefined;
  const before = messageSnapshotOf(record.dynamodb?.OldImage as Image | undefined);
  return {
    accountId: after.accountId,
    logFields: { message_uuid: after.messageUuid },
    events: deriveEvents(before, after).map((webhookEvent: WebhookEvent) => ({
      id: webhookEvent.id,
      type: webhookEvent.type,
      body: eventBody(webhookEvent, formatDate),
      about: { messageUuid: webhookEvent.messageUuid },
    })),
  };
}

async function fanOutRecord(
  record: DynamoDBRecord,
  endpointsOf: (accountId: string) => Promise<StoredEndpoint[]>,
): Promise<void> {
  if (record.eventName === 'REMOVE') return;
  const change = eventsOf(record);
  if (change === undefined || change.events.length === 0) return;
  const { accountId, events, logFields } = change;
  const endpoints = await endpointsOf(accountId);
  if (endpoints.length === 0) return;
  const jobs: DeliveryJob[] = [];
  const nowMs = Date.now();
  for (const webhookEvent of events) {
    const targets = endpoints.filter((endpoint) => subscribes(endpoint.events, webhookEvent.type));
    if (targets.length === 0) continue;
    await store(webhookEvent, accountId, nowMs);
    for (const endpoint of targets) {
      jobs.push({
        account_id: accountId,
        webhook_id: endpoint.webhookId,
        event_id: webhookEvent.id,
        attempt: 1,
        due_at: nowMs,
      });
    }
  }
  await enqueueDeliveries(jobs);
  if (jobs.length > 0) {
    log('info', 'webhook events fanned out', {
      ...logFields,
      events: events.map((item) => item.type),
      jobs: jobs.length,
    });
  }
}

function store(webhookEvent: OutgoingEvent, accountId: string, nowMs: number): Promise<void> {
  return putEvent(
    {
      eventId: webhookEvent.id,
      accountId,
      type: webhookEvent.type,
      ...webhookEvent.about,
      body: webhookEvent.body,
      createdAt: new Date(nowMs).toISOString(),
    },
    Math.floor(nowMs / 1000) + eventRetentionSeconds,
  );
}
