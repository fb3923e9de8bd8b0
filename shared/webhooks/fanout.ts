import { unmarshall } from '@aws-sdk/util-dynamodb';
import { deriveKeyChanges, keySnapshotOf } from '../apikeys/index.ts';
import { inboundItemOf } from '../inbound/index.ts';
import { deriveChanges, type MessageChange, messageSnapshotOf } from '../messages/index.ts';
import { describeError, log } from '../platform/observability/log.ts';
import type { ItemImage, TableChange } from '../platform/table/change.ts';
import { formatDate } from '../platform/time/format.ts';
import { hitEventOf, hitItemOf } from '../tracking/index.ts';
import { eventRetentionSeconds } from './config.ts';
import { deriveDomainEvents, domainEventBody, domainSnapshotOf } from './model/domain-events.ts';
import { deriveEndpointEvents, endpointEventBody } from './model/endpoint-events.ts';
import { eventBody, subscribes, type WebhookEventType } from './model/events.ts';
import { inboundReceivedEvent, inboundReceivedType } from './model/inbound-event.ts';
import { keyEvent } from './model/key-event.ts';
import {
  type DeliveryJob,
  endpointSnapshotOf,
  enqueueDeliveries,
  listEndpoints,
  putEvent,
  type StoredEndpoint,
} from './store/webhooks.ts';

/**
 * The table stream's consumer (docs/webhooks.md, "Events"): every committed change of a message
 * item is diffed into events, every received message's new item is an `inbound.received`, and an
 * endpoint item that became disabled is a `webhook.disabled` (for the account's other endpoints:
 * the disabled one is no longer enabled), an API key item made, rotated or revoked is a `key.*`; each event is stored (7 days, for replays) and fanned out
 * as one queue job per enabled endpoint of the account that subscribed to its type. The stream is the
 * outbox: nothing that was written can be missed, and a change whose events could not be stored or
 * queued throws, so the stream hands it (and what follows it) over again (functions/webhook-fanout
 * answers it in `batchItemFailures`; a change that cannot be decoded at all is logged and left out:
 * it would never succeed). Ids are derived from the change, so doing a change twice stores nothing
 * new; its jobs may repeat (at least once).
 *
 * `batchFanOut()` is one batch's fan-out: the function to call with each of its changes.
 */
export function batchFanOut(): (change: TableChange) => Promise<void> {
  // The accounts' enabled endpoints, read once a batch.
  const endpoints = new Map<string, Promise<StoredEndpoint[]>>();
  const endpointsOf = (accountId: string) => {
    let found = endpoints.get(accountId);
    if (found === undefined) {
      found = listEndpoints(accountId).then((list) => list.filter((endpoint) => endpoint.enabled));
      endpoints.set(accountId, found);
    }
    return found;
  };
  return (change) => fanOutChange(change, endpointsOf);
}

/** One event to store and deliver, its body already built. */
interface OutgoingEvent {
  id: string;
  type: WebhookEventType;
  body: string;
  /** What the event is about: a sent message or a received one (nothing for an endpoint's own event). */
  about: { messageUuid: string } | { inboundUuid: string } | Record<string, never>;
}

/**
 * The events one committed change produced: a message item's status changes (diffed), the
 * creation of a received message's item (`inbound.received`, once: later writes are no events), or
 * an endpoint's change from enabled to disabled (`webhook.disabled`).
 */
function eventsOf(
  change: TableChange,
): { accountId: string; logFields: Record<string, string>; events: OutgoingEvent[] } | undefined {
  const inbound = inboundItemOf(change.after);
  if (inbound !== undefined) {
    if (change.kind !== 'INSERT') return undefined;
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
  const apiKey = keySnapshotOf(plainKeyItem(change.after));
  if (apiKey !== undefined) {
    return {
      accountId: apiKey.accountId,
      logFields: { key_id: apiKey.keyId },
      events: deriveKeyChanges(keySnapshotOf(plainKeyItem(change.before)), apiKey).map((keyChange) => ({
        ...keyEvent(keyChange, formatDate),
        type: keyChange.type,
        about: {},
      })),
    };
  }
  const endpoint = endpointSnapshotOf(change.after);
  if (endpoint !== undefined) {
    const before = endpointSnapshotOf(change.before);
    return {
      accountId: endpoint.accountId,
      logFields: { webhook_id: endpoint.webhookId },
      events: deriveEndpointEvents(before, endpoint).map((event) => ({
        id: event.id,
        type: event.type,
        body: endpointEventBody(event, formatDate),
        about: {},
      })),
    };
  }
  const domain = domainSnapshotOf(change.after);
  if (domain !== undefined) {
    const events = deriveDomainEvents(domainSnapshotOf(change.before), domain);
    const [first] = events;
    if (first === undefined) return undefined;
    return {
      accountId: first.accountId,
      logFields: { domain: domain.domain },
      events: events.map((event) => ({
        id: event.id,
        type: event.type,
        body: domainEventBody(event, formatDate),
        about: {},
      })),
    };
  }
  const hit = hitItemOf(change.after);
  if (hit !== undefined) {
    const event = hitEventOf(hitItemOf(change.before), hit);
    return {
      accountId: event.accountId,
      logFields: { message_uuid: event.messageUuid },
      events: [
        {
          id: event.id,
          type: event.type,
          body: eventBody(event, formatDate),
          about: { messageUuid: event.messageUuid },
        },
      ],
    };
  }
  const after = messageSnapshotOf(change.after);
  if (after === undefined) return undefined;
  const before = messageSnapshotOf(change.before);
  return {
    accountId: after.accountId,
    logFields: { message_uuid: after.messageUuid },
    events: deriveChanges(before, after).map((webhookEvent: MessageChange) => ({
      id: webhookEvent.id,
      type: webhookEvent.type,
      body: eventBody(webhookEvent, formatDate),
      about: { messageUuid: webhookEvent.messageUuid },
    })),
  };
}

/** An API key item's image as a plain item (other items are left alone: most changes are messages'). */
function plainKeyItem(image: ItemImage | undefined): Record<string, unknown> | undefined {
  return image?.pk?.S?.startsWith('APIKEY#') ? (unmarshall(image) as Record<string, unknown>) : undefined;
}

async function fanOutChange(
  change: TableChange,
  endpointsOf: (accountId: string) => Promise<StoredEndpoint[]>,
): Promise<void> {
  if (change.kind === 'REMOVE') return;
  let outgoing: ReturnType<typeof eventsOf>;
  try {
    outgoing = eventsOf(change);
  } catch (error) {
    // An image that cannot be decoded fails the same way at every retry: retried, it would hold
    // back every later change of its stream shard (every account's events) until the stream drops
    // it. It is logged and left out; failures to store or queue (a store down) are still retried.
    log('error', 'a stream record could not be read as an event source; left out', {
      sequence_number: change.sequenceNumber,
      ...describeError(error),
    });
    return;
  }
  if (outgoing === undefined || outgoing.events.length === 0) return;
  const { accountId, events, logFields } = outgoing;
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
