import { randomBytes } from 'node:crypto';
import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { log } from '../platform/observability/log.ts';
import { formatDate } from '../platform/time/format.ts';
import {
  eventRetentionSeconds,
  maxWebhooksPerAccount,
  previousSecretSeconds,
  targetPolicy,
} from './config.ts';
import { resolveTarget, TargetRefused } from './http-target.ts';
import { healthNote, healthy, stateOf } from './model/endpoint-health.ts';
import { webhookEventTypes } from './model/events.ts';
import { sampleEventBody } from './model/sample-event.ts';
import type { WebhookAddRequest, WebhookTestRequest, WebhookUpdateRequest } from './schemas.ts';
import { newWebhookSecret, sealWebhookSecret } from './secrets.ts';
import {
  createEndpoint,
  type DeliveryAttempt,
  deleteEndpoint,
  enqueueDeliveries,
  getEndpoint,
  getEvent,
  latestAttempts,
  listEndpoints,
  putEvent,
  rotateEndpointSecret,
  type StoredEndpoint,
  updateEndpointSettings,
} from './store/webhooks.ts';

/**
 * Endpoint management (docs/webhooks.md): add, query, update, delete, rotate the secret, replay an
 * event, send a test event.
 * Every operation is scoped to the caller's account; an unknown or foreign webhook_id is 112.
 */
const notFound = () => new ServiceError(Code.NotFound, 'No such webhook');

function view(endpoint: StoredEndpoint, nowMs = Date.now()) {
  const { health } = endpoint;
  return {
    webhook_id: endpoint.webhookId,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    enabled: endpoint.enabled,
    created_at: formatDate(endpoint.createdAt),
    health: {
      state: stateOf(health, endpoint.enabled, nowMs),
      consecutive_failures: health.consecutiveFailures,
      failing_since: health.failingSince === undefined ? null : formatDate(health.failingSince),
      paused_until:
        health.pausedUntil === undefined || Date.parse(health.pausedUntil) <= nowMs
          ? null
          : formatDate(health.pausedUntil),
    },
    note: healthNote(health, endpoint, nowMs, formatDate),
  };
}

function attemptView(attempt: DeliveryAttempt) {
  return {
    event_id: attempt.eventId,
    type: attempt.type,
    attempt: attempt.attempt,
    status_code: attempt.statusCode,
    error: attempt.error,
    at: formatDate(attempt.at),
    next_attempt_at: attempt.nextAttemptAt === null ? null : formatDate(attempt.nextAttemptAt),
  };
}

/** Refuses a URL the target rule forbids (as written, and for a name, what it resolves to now). */
async function checkUrl(url: string): Promise<void> {
  const policy = targetPolicy();
  try {
    await resolveTarget(new URL(url), policy);
  } catch (error) {
    if (error instanceof TargetRefused) {
      // A name that does not resolve yet is accepted: it is checked again on every attempt.
      if (error.message.includes('does not resolve')) return;
      throw new ServiceError(Code.InvalidInput, undefined, {
        details: [{ field: 'url', message: error.message }],
      });
    }
    if (error instanceof TypeError) {
      throw new ServiceError(Code.InvalidInput, undefined, {
        details: [{ field: 'url', message: 'Must be an absolute http(s) URL' }],
      });
    }
    throw error;
  }
}

export async function addWebhook(input: WebhookAddRequest, accountId: string, now = new Date()) {
  await checkUrl(input.url);
  const webhookId = `wh_${randomBytes(12).toString('hex')}`;
  const secret = newWebhookSecret();
  const at = now.toISOString();
  const endpoint: StoredEndpoint = {
    health: healthy,
    webhookId,
    accountId,
    url: input.url,
    events: input.events ?? [...webhookEventTypes],
    description: input.description ?? null,
    enabled: true,
    createdAt: at,
    updatedAt: at,
    secretCiphertext: await sealWebhookSecret(webhookId, secret),
  };
  const result = await createEndpoint(endpoint, maxWebhooksPerAccount);
  if (result === 'limit') {
    throw new ServiceError(
      Code.MethodValidation,
      `An account has at most ${maxWebhooksPerAccount} webhooks`,
      {
        details: [
          {
            field: 'url',
            message: `Delete an endpoint first: the limit is ${maxWebhooksPerAccount} per account`,
          },
        ],
      },
    );
  }
  log('info', 'webhook added', { webhook_id: webhookId, account: accountId, events: endpoint.events.length });
  return { webhook: { ...view(endpoint), secret } };
}

export async function queryWebhooks(webhookId: string | undefined, accountId: string) {
  if (webhookId === undefined) {
    const endpoints = await listEndpoints(accountId);
    return { webhooks: endpoints.map(view), count: endpoints.length };
  }
  const endpoint = await getEndpoint(accountId, webhookId);
  if (endpoint === undefined) throw notFound();
  const deliveries = await latestAttempts(webhookId, 50);
  return { webhook: { ...view(endpoint), deliveries: deliveries.map(attemptView) } };
}

export async function deleteWebhook(webhookId: string, accountId: string) {
  if (!(await deleteEndpoint(accountId, webhookId))) throw notFound();
  log('info', 'webhook deleted', { webhook_id: webhookId, account: accountId });
  return { webhook_id: webhookId, deleted: true as const };
}

export async function rotateWebhookSecret(webhookId: string, accountId: string, now = new Date()) {
  const endpoint = await getEndpoint(accountId, webhookId);
  if (endpoint === undefined) throw notFound();
  const secret = newWebhookSecret();
  const ciphertext = await sealWebhookSecret(webhookId, secret);
  const until = new Date(now.getTime() + previousSecretSeconds * 1000).toISOString();
  const rotated = await rotateEndpointSecret(endpoint, ciphertext, until, now.toISOString());
  if (rotated === undefined) {
    throw new ServiceError(Code.CommitFailed, 'The webhook changed at the same moment; retry');
  }
  log('info', 'webhook secret rotated', { webhook_id: webhookId, account: accountId });
  return { webhook: { ...view(rotated), secret } };
}

export async function replayWebhookEvent(
  webhookId: string,
  eventId: string,
  accountId: string,
  now = Date.now(),
) {
  const endpoint = await getEndpoint(accountId, webhookId);
  if (endpoint === undefined) throw notFound();
  const stored = await getEvent(eventId, Math.floor(now / 1000));
  if (stored === undefined || stored.accountId !== accountId) {
    throw new ServiceError(Code.NotFound, 'No such event (events are kept 7 days)');
  }
  if (!endpoint.enabled) {
    throw new ServiceError(
      Code.MethodValidation,
      'The webhook is disabled (its receiver answered 410); add it again',
    );
  }
  await enqueueDeliveries([
    { account_id: accountId, webhook_id: webhookId, event_id: eventId, attempt: 1, due_at: now },
  ]);
  log('info', 'webhook event replayed', { webhook_id: webhookId, event_id: eventId, account: accountId });
  return { webhook_id: webhookId, event_id: eventId, queued: true as const };
}

export async function updateWebhook(input: WebhookUpdateRequest, accountId: string, now = new Date()) {
  if (input.url === undefined && input.events === undefined) {
    throw new ServiceError(Code.InvalidInput, undefined, {
      details: [{ field: 'url', message: 'Give url, events or both: the fields to change' }],
    });
  }
  const endpoint = await getEndpoint(accountId, input.webhook_id);
  if (endpoint === undefined) throw notFound();
  if (input.url !== undefined) await checkUrl(input.url);
  const settings = { url: input.url ?? endpoint.url, events: input.events ?? endpoint.events };
  const updated = await updateEndpointSettings(accountId, input.webhook_id, settings, now.toISOString());
  if (updated === undefined) throw notFound();
  log('info', 'webhook updated', {
    webhook_id: input.webhook_id,
    account: accountId,
    url_changed: settings.url !== endpoint.url,
    events: settings.events.length,
  });
  return { webhook: view(updated) };
}

/**
 * A sample event of the asked type (./model/sample-event.ts), stored like a real one and queued to
 * this endpoint alone: the delivery worker signs, posts and records it as it does every event, so
 * the endpoint's attempts show it and a failure is retried on the same schedule.
 */
export async function sendTestEvent(input: WebhookTestRequest, accountId: string, now = Date.now()) {
  const endpoint = await getEndpoint(accountId, input.webhook_id);
  if (endpoint === undefined) throw notFound();
  if (!endpoint.enabled) {
    throw new ServiceError(
      Code.MethodValidation,
      'The webhook is disabled (its receiver answered 410); add it again',
    );
  }
  const eventId = `evt_${randomBytes(16).toString('hex')}`;
  const at = new Date(now).toISOString();
  await putEvent(
    {
      eventId,
      accountId,
      type: input.type,
      body: sampleEventBody(input.type, endpoint.webhookId, endpoint.url, formatDate(at)),
      createdAt: at,
    },
    Math.floor(now / 1000) + eventRetentionSeconds,
  );
  await enqueueDeliveries([
    { account_id: accountId, webhook_id: endpoint.webhookId, event_id: eventId, attempt: 1, due_at: now },
  ]);
  log('info', 'webhook test event queued', {
    webhook_id: endpoint.webhookId,
    event_id: eventId,
    type: input.type,
  });
  return { webhook_id: endpoint.webhookId, event_id: eventId, type: input.type, queued: true as const };
}
