import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { messageGroupOf } from '../../platform/aws/fair-queue.ts';
import { guarded } from '../../platform/aws/faults.ts';
import { sqs } from '../../platform/aws/sqs.ts';
import * as table from '../../platform/table/gateway.ts';
import { stableHash } from '../../platform/table/keys.ts';
import { webhookDeadLetterQueueUrl, webhookQueueUrl } from '../config.ts';
import type { EndpointSnapshot } from '../model/endpoint-events.ts';
import type { EndpointHealth } from '../model/endpoint-health.ts';

/**
 * Webhook storage (docs/data-model.md, "Webhooks"): endpoints and their per-account counter in the
 * account's partition, stored events (7 days, TTL) in their own partitions, delivery attempts per
 * endpoint over `attemptShards` partitions, and the webhook queue with its dead-letter queue. No
 * item shares a constant key.
 */

/**
 * Partitions of one endpoint's delivery attempts, chosen by the event id: an endpoint that receives
 * every event of an account at 1,000 messages/s (several events each) writes a few thousand
 * attempts a second, over DynamoDB's 1,000 write units per second on one partition key.
 */
export const attemptShards = 8;
export const webhookKeys = {
  endpoint: (accountId: string, webhookId: string) => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `WEBHOOK#${webhookId}`,
  }),
  endpointPrefix: 'WEBHOOK#',
  counter: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: 'WEBHOOKS' }),
  event: (eventId: string) => ({ pk: `WEBHOOK_EVENT#${eventId}`, sk: 'EVENT' }),
  deliveries: (webhookId: string, shard: number) => `WEBHOOK_DELIVERIES#${webhookId}#${shard}`,
  /** The partition an attempt is written to: the endpoint's shard of the event. */
  attemptPartition: (webhookId: string, eventId: string) =>
    `WEBHOOK_DELIVERIES#${webhookId}#${stableHash(eventId) % attemptShards}`,
} as const;

export interface StoredEndpoint {
  webhookId: string;
  accountId: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  secretCiphertext: string;
  /** Set for 24 h after a rotation: the previous secret still signs until `previousSecretUntil`. */
  previousSecretCiphertext?: string;
  previousSecretUntil?: string;
  disabledAt?: string;
  disabledReason?: string;
  /** Failures in a row and pause (docs/webhooks.md, "Failing endpoints"). */
  health: EndpointHealth;
}

function healthOf(item: Record<string, unknown>): EndpointHealth {
  const health: EndpointHealth = {
    consecutiveFailures: typeof item.consecutive_failures === 'number' ? item.consecutive_failures : 0,
  };
  if (typeof item.failing_since === 'string') health.failingSince = item.failing_since;
  if (typeof item.paused_until === 'string') health.pausedUntil = item.paused_until;
  return health;
}

function toEndpoint(item: Record<string, unknown>): StoredEndpoint {
  const endpoint: StoredEndpoint = {
    webhookId: String(item.webhook_id),
    accountId: String(item.account_id),
    url: String(item.url),
    events: Array.isArray(item.events) ? (item.events as string[]) : [],
    description: typeof item.description === 'string' ? item.description : null,
    enabled: item.enabled !== false,
    createdAt: String(item.created_at),
    updatedAt: String(item.updated_at ?? item.created_at),
    secretCiphertext: String(item.secret_ciphertext),
    health: healthOf(item),
  };
  if (typeof item.previous_secret_ciphertext === 'string')
    endpoint.previousSecretCiphertext = item.previous_secret_ciphertext;
  if (typeof item.previous_secret_until === 'string')
    endpoint.previousSecretUntil = item.previous_secret_until;
  if (typeof item.disabled_at === 'string') endpoint.disabledAt = item.disabled_at;
  if (typeof item.disabled_reason === 'string') endpoint.disabledReason = item.disabled_reason;
  return endpoint;
}

/**
 * Creates an endpoint unless the account already has `max`: the counter update (conditional on
 * the limit) and the endpoint put are one transaction, so concurrent adds cannot pass the limit.
 */
export async function createEndpoint(
  endpoint: Omit<StoredEndpoint, 'health'>,
  max: number,
): Promise<'created' | 'limit'> {
  const outcome = await table.transact([
    {
      Update: {
        Key: webhookKeys.counter(endpoint.accountId),
        UpdateExpression:
          'SET webhook_count = if_not_exists(webhook_count, :zero) + :one, account_id = :account',
        ConditionExpression: 'attribute_not_exists(webhook_count) OR webhook_count < :max',
        ExpressionAttributeValues: {
          ':zero': 0,
          ':one': 1,
          ':max': max,
          ':account': endpoint.accountId,
        },
      },
    },
    {
      Put: {
        Item: {
          ...webhookKeys.endpoint(endpoint.accountId, endpoint.webhookId),
          webhook_id: endpoint.webhookId,
          account_id: endpoint.accountId,
          url: endpoint.url,
          events: endpoint.events,
          description: endpoint.description ?? undefined,
          enabled: endpoint.enabled,
          created_at: endpoint.createdAt,
          updated_at: endpoint.updatedAt,
          secret_ciphertext: endpoint.secretCiphertext,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ]);
  if (outcome.outcome === 'applied') return 'created';
  if (outcome.failed[0] === 0) return 'limit';
  throw table.conditionFault(outcome);
}

export async function getEndpoint(accountId: string, webhookId: string): Promise<StoredEndpoint | undefined> {
  const item = await table.get(webhookKeys.endpoint(accountId, webhookId), { ConsistentRead: true });
  return item === undefined ? undefined : toEndpoint(item);
}

/** Every endpoint of an account (at most 10), oldest first. */
export async function listEndpoints(accountId: string): Promise<StoredEndpoint[]> {
  const page = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: {
      ':pk': webhookKeys.counter(accountId).pk,
      ':prefix': webhookKeys.endpointPrefix,
    },
  });
  return page.items.map(toEndpoint).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** Deletes an endpoint and decrements the counter; false when it did not exist. */
export async function deleteEndpoint(accountId: string, webhookId: string): Promise<boolean> {
  const outcome = await table.transact([
    {
      Delete: {
        Key: webhookKeys.endpoint(accountId, webhookId),
        ConditionExpression: 'attribute_exists(pk)',
      },
    },
    {
      Update: {
        Key: webhookKeys.counter(accountId),
        UpdateExpression: 'SET webhook_count = webhook_count - :one',
        ConditionExpression: 'webhook_count > :zero',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
      },
    },
  ]);
  if (outcome.outcome === 'applied') return true;
  if (outcome.failed[0] === 0) return false;
  // A counter that is already 0 (never expected): delete the endpoint alone.
  const alone = await table.delete({
    Key: webhookKeys.endpoint(accountId, webhookId),
    ConditionExpression: 'attribute_exists(pk)',
  });
  return alone.outcome === 'applied';
}

/** Stores a new secret; the current one becomes the previous one until `previousUntil`. */
export async function rotateEndpointSecret(
  endpoint: StoredEndpoint,
  secretCiphertext: string,
  previousUntil: string,
  at: string,
): Promise<StoredEndpoint | undefined> {
  const result = await table.update({
    Key: webhookKeys.endpoint(endpoint.accountId, endpoint.webhookId),
    UpdateExpression:
      'SET secret_ciphertext = :new, previous_secret_ciphertext = :old, previous_secret_until = :until, updated_at = :at',
    // Against a concurrent rotation: the secret replaced must be the one read.
    ConditionExpression: 'secret_ciphertext = :old',
    ExpressionAttributeValues: {
      ':new': secretCiphertext,
      ':old': endpoint.secretCiphertext,
      ':until': previousUntil,
      ':at': at,
    },
    ReturnValues: 'ALL_NEW',
  });
  return result.outcome === 'applied' && result.attributes !== undefined
    ? toEndpoint(result.attributes)
    : undefined;
}

/**
 * Changes an endpoint's URL and events; its secret, health and history stay. Undefined when the
 * endpoint is gone.
 */
export async function updateEndpointSettings(
  accountId: string,
  webhookId: string,
  settings: { url: string; events: string[] },
  at: string,
): Promise<StoredEndpoint | undefined> {
  const attributes = await updateEndpointIf(
    accountId,
    webhookId,
    'SET #url = :url, events = :events, updated_at = :at',
    'attribute_exists(pk)',
    { ':url': settings.url, ':events': settings.events, ':at': at },
    { '#url': 'url' },
  );
  return attributes === undefined ? undefined : toEndpoint(attributes);
}

/**
 * One conditional update of an endpoint item: the new attributes, or undefined when the condition
 * did not hold (the endpoint is gone, or its state moved on).
 */
async function updateEndpointIf(
  accountId: string,
  webhookId: string,
  update: string,
  condition: string,
  values: Record<string, unknown>,
  names?: Record<string, string>,
): Promise<Record<string, unknown> | undefined> {
  const result = await table.update({
    Key: webhookKeys.endpoint(accountId, webhookId),
    UpdateExpression: update,
    ConditionExpression: condition,
    ExpressionAttributeValues: values,
    ...(names === undefined ? {} : { ExpressionAttributeNames: names }),
    ReturnValues: 'ALL_NEW',
  });
  return result.outcome === 'applied' ? (result.attributes ?? {}) : undefined;
}

/** The endpoint stops receiving until it is added again (a 410, or days of failures). */
export async function disableEndpoint(
  accountId: string,
  webhookId: string,
  reason: string,
  at: string,
): Promise<void> {
  await updateEndpointIf(
    accountId,
    webhookId,
    'SET enabled = :false, disabled_at = :at, disabled_reason = :reason, updated_at = :at',
    'attribute_exists(pk)',
    { ':false': false, ':at': at, ':reason': reason },
  );
}

/**
 * An endpoint item of a table stream image (DynamoDB JSON), for the `webhook.disabled` event; the
 * one place besides `toEndpoint` that reads the endpoint layout. Undefined for any other item.
 */
export function endpointSnapshotOf(
  image: Record<string, AttributeValue> | undefined,
): EndpointSnapshot | undefined {
  if (image === undefined) return undefined;
  const item = unmarshall(image) as Record<string, unknown>;
  if (typeof item.sk !== 'string' || !item.sk.startsWith(webhookKeys.endpointPrefix)) return undefined;
  if (typeof item.account_id !== 'string' || typeof item.webhook_id !== 'string') return undefined;
  const snapshot: EndpointSnapshot = {
    accountId: item.account_id,
    webhookId: item.webhook_id,
    url: String(item.url ?? ''),
    enabled: item.enabled !== false,
  };
  if (typeof item.disabled_at === 'string') snapshot.disabledAt = item.disabled_at;
  if (typeof item.disabled_reason === 'string') snapshot.disabledReason = item.disabled_reason;
  return snapshot;
}

// ---------------------------------------------------------------------------------------------
// Endpoint health: written only when an attempt fails, when a failing endpoint succeeds, and when
// one trial attempt is claimed, never on the attempts of a healthy endpoint.

/** Counts a failed attempt; answers the streak as stored with it (undefined: the endpoint is gone). */
export async function recordEndpointFailure(
  accountId: string,
  webhookId: string,
  at: string,
): Promise<{ consecutiveFailures: number; failingSince: string } | undefined> {
  const stored = await updateEndpointIf(
    accountId,
    webhookId,
    'ADD consecutive_failures :one SET failing_since = if_not_exists(failing_since, :at), last_failure_at = :at',
    'attribute_exists(pk)',
    { ':one': 1, ':at': at },
  );
  if (stored === undefined) return undefined;
  const health = healthOf(stored);
  return { consecutiveFailures: health.consecutiveFailures, failingSince: health.failingSince ?? at };
}

/**
 * Pauses the endpoint's jobs until `until`, unless the streak moved meanwhile (a success reset it, or
 * a later failure already set its own pause).
 */
export async function pauseEndpoint(
  accountId: string,
  webhookId: string,
  failures: number,
  until: string,
): Promise<void> {
  await updateEndpointIf(
    accountId,
    webhookId,
    'SET paused_until = :until',
    'consecutive_failures = :failures',
    {
      ':until': until,
      ':failures': failures,
    },
  );
}

/** A 2xx: the streak and any pause end (only written when there was one). */
export async function recordEndpointSuccess(accountId: string, webhookId: string): Promise<void> {
  await updateEndpointIf(
    accountId,
    webhookId,
    'SET consecutive_failures = :zero REMOVE failing_since, paused_until, last_failure_at',
    'attribute_exists(pk) AND consecutive_failures > :zero',
    { ':zero': 0 },
  );
}

/**
 * Claims the one trial attempt of a paused endpoint whose pause is over: moves the pause to `until`
 * (the trial's window) if it is still `seen`. False when another job claimed it first.
 */
export async function claimEndpointTrial(
  accountId: string,
  webhookId: string,
  seen: string,
  until: string,
): Promise<boolean> {
  const claimed = await updateEndpointIf(
    accountId,
    webhookId,
    'SET paused_until = :until',
    'paused_until = :seen',
    {
      ':until': until,
      ':seen': seen,
    },
  );
  return claimed !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Events

export interface StoredEvent {
  eventId: string;
  accountId: string;
  type: string;
  /** What the event is about: a sent message, or a received one (`inbound.received`). */
  messageUuid?: string;
  inboundUuid?: string;
  /** The exact JSON body every delivery of this event sends. */
  body: string;
  createdAt: string;
}

/**
 * Stores an event for replay. Idempotent: an event id is derived from its change, so a second
 * write of the same id (a re-processed stream batch) keeps the first body.
 */
export async function putEvent(event: StoredEvent, expiresAt: number): Promise<void> {
  // A failed condition: the event is stored already, with its first body.
  await table.put({
    Item: {
      ...webhookKeys.event(event.eventId),
      event_id: event.eventId,
      account_id: event.accountId,
      type: event.type,
      ...(event.messageUuid === undefined ? {} : { message_uuid: event.messageUuid }),
      ...(event.inboundUuid === undefined ? {} : { inbound_uuid: event.inboundUuid }),
      body: event.body,
      created_at: event.createdAt,
      expires_at: expiresAt,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
}

export async function getEvent(eventId: string, nowSeconds: number): Promise<StoredEvent | undefined> {
  const item = await table.get(webhookKeys.event(eventId), { ConsistentRead: true });
  // TTL removes items within days of expiry, not at once: an expired one counts as gone.
  if (item === undefined || Number(item.expires_at) < nowSeconds) return undefined;
  return {
    eventId: String(item.event_id),
    accountId: String(item.account_id),
    type: String(item.type),
    ...(typeof item.message_uuid === 'string' ? { messageUuid: item.message_uuid } : {}),
    ...(typeof item.inbound_uuid === 'string' ? { inboundUuid: item.inbound_uuid } : {}),
    body: String(item.body),
    createdAt: String(item.created_at),
  };
}

// ---------------------------------------------------------------------------------------------
// Delivery attempts

export interface DeliveryAttempt {
  eventId: string;
  type: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  at: string;
  nextAttemptAt: string | null;
}

export async function recordAttempt(
  webhookId: string,
  attempt: DeliveryAttempt,
  expiresAt: number,
): Promise<void> {
  await table.put({
    Item: {
      pk: webhookKeys.attemptPartition(webhookId, attempt.eventId),
      sk: `${attempt.at}#${attempt.eventId}#${String(attempt.attempt).padStart(3, '0')}`,
      webhook_id: webhookId,
      event_id: attempt.eventId,
      type: attempt.type,
      attempt: attempt.attempt,
      status_code: attempt.statusCode,
      error: attempt.error,
      at: attempt.at,
      next_attempt_at: attempt.nextAttemptAt,
      expires_at: expiresAt,
    },
  });
}

/** The latest attempts of an endpoint, newest first: the newest `limit` of each shard, merged. */
export async function latestAttempts(webhookId: string, limit: number): Promise<DeliveryAttempt[]> {
  const shards = await Promise.all(
    Array.from({ length: attemptShards }, (_, shard) =>
      table.query({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': webhookKeys.deliveries(webhookId, shard) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    ),
  );
  return shards
    .flatMap((page) => page.items)
    .sort((a, b) => (String(a.sk) < String(b.sk) ? 1 : String(a.sk) > String(b.sk) ? -1 : 0))
    .slice(0, limit)
    .map((item) => ({
      eventId: String(item.event_id),
      type: String(item.type),
      attempt: Number(item.attempt),
      statusCode: typeof item.status_code === 'number' ? item.status_code : null,
      error: typeof item.error === 'string' ? item.error : null,
      at: String(item.at),
      nextAttemptAt: typeof item.next_attempt_at === 'string' ? item.next_attempt_at : null,
    }));
}

// ---------------------------------------------------------------------------------------------
// The webhook queue: one message per (event, endpoint) and attempt

export interface DeliveryJob {
  account_id: string;
  webhook_id: string;
  event_id: string;
  /** 1-based number of the attempt this message is for. */
  attempt: number;
  /** Epoch ms: not to be attempted before. */
  due_at: number;
}

export function parseDeliveryJob(body: string): DeliveryJob | undefined {
  try {
    const job = JSON.parse(body) as Partial<DeliveryJob>;
    if (
      typeof job.account_id !== 'string' ||
      typeof job.webhook_id !== 'string' ||
      typeof job.event_id !== 'string' ||
      typeof job.attempt !== 'number' ||
      typeof job.due_at !== 'number'
    ) {
      return undefined;
    }
    return job as DeliveryJob;
  } catch {
    return undefined;
  }
}

/** Queues jobs (up to 10 per call); throws if any entry was refused, so the caller retries. */
export async function enqueueDeliveries(jobs: readonly DeliveryJob[], delaySeconds = 0): Promise<void> {
  for (let start = 0; start < jobs.length; start += 10) {
    const slice = jobs.slice(start, start + 10);
    const result = await guarded('queue', () =>
      sqs().send(
        new SendMessageBatchCommand({
          QueueUrl: webhookQueueUrl(),
          Entries: slice.map((job, index) => ({
            Id: String(index),
            MessageBody: JSON.stringify(job),
            // The account is the job's fair-queue group (shared/platform/aws/fair-queue.ts).
            MessageGroupId: messageGroupOf(job.account_id),
            DelaySeconds: delaySeconds,
          })),
        }),
      ),
    );
    if ((result.Failed ?? []).length > 0) {
      throw new Error(`The webhook queue refused ${result.Failed?.length} of ${slice.length} entries`);
    }
  }
}

export async function enqueueDelivery(job: DeliveryJob, delaySeconds: number): Promise<void> {
  await guarded('queue', () =>
    sqs().send(
      new SendMessageCommand({
        QueueUrl: webhookQueueUrl(),
        MessageBody: JSON.stringify(job),
        MessageGroupId: messageGroupOf(job.account_id),
        DelaySeconds: delaySeconds,
      }),
    ),
  );
}

/** After the last attempt: the job goes to the dead-letter queue (the event stays replayable). */
export async function sendToDeadLetter(job: DeliveryJob, reason: string): Promise<void> {
  await guarded('queue', () =>
    sqs().send(
      new SendMessageCommand({
        QueueUrl: webhookDeadLetterQueueUrl(),
        MessageBody: JSON.stringify({ ...job, reason }),
      }),
    ),
  );
}
