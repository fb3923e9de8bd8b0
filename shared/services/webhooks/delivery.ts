import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { deliveryRetentionSeconds, retrySchedule, targetPolicy } from '../../config/webhooks.ts';
import {
  attemptTimeoutMs,
  earlyToleranceMs,
  nextAttemptAt,
  queueDelaySeconds,
  verdictOf,
} from '../../domain/webhooks/delivery.ts';
import { describeError, log } from '../../observability/log.ts';
import { countWebhookDelivery } from '../../observability/metrics.ts';
import {
  type DeliveryJob,
  disableEndpoint,
  enqueueDelivery,
  getEndpoint,
  getEvent,
  parseDeliveryJob,
  recordAttempt,
  type StoredEndpoint,
  sendToDeadLetter,
} from '../../repositories/webhooks.ts';
import { postTo, type Resolver, resolveTarget, systemResolver, TargetRefused } from './http-target.ts';
import { openWebhookSecret } from './secrets.ts';
import { deliveryHeaders } from './signing.ts';

/**
 * The webhook queue's consumer (docs/webhooks.md, "Delivery"): one job = one attempt to deliver one
 * event to one endpoint. 2xx: done. 410: the endpoint is disabled. Anything else: the next attempt
 * is queued on the retry schedule (waits beyond SQS's 15 minutes are re-queued with what remains);
 * after the last one the job goes to the dead-letter queue. Every attempt is recorded. A job whose
 * processing fails (a store down) is reported in `batchItemFailures` and comes back, so a crash
 * loses nothing; delivery is at least once.
 */
export interface DeliveryDependencies {
  now?: () => number;
  resolve?: Resolver;
  /** The HTTP call (tests inject faults here). */
  post?: typeof postTo;
}

export async function processWebhookBatch(
  event: SQSEvent,
  deps: DeliveryDependencies = {},
): Promise<SQSBatchResponse> {
  const results = await Promise.allSettled(event.Records.map((record) => handleJob(record.body, deps)));
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  results.forEach((result, index) => {
    if (result.status === 'rejected') {
      const record = event.Records[index];
      log('warn', 'webhook job failed; it will be retried', {
        message_id: record?.messageId,
        ...describeError(result.reason),
      });
      if (record !== undefined) batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  });
  return { batchItemFailures };
}

async function handleJob(body: string, deps: DeliveryDependencies): Promise<void> {
  const now = deps.now ?? Date.now;
  const job = parseDeliveryJob(body);
  if (job === undefined) {
    log('warn', 'webhook job ignored: malformed', {});
    return;
  }
  if (job.due_at - now() > earlyToleranceMs) {
    // A wait longer than SQS's longest delay: back to the queue for the rest.
    await enqueueDelivery(job, queueDelaySeconds(job.due_at, now()));
    return;
  }
  const endpoint = await getEndpoint(job.account_id, job.webhook_id);
  if (endpoint === undefined || !endpoint.enabled) {
    log('info', 'webhook job dropped', {
      webhook_id: job.webhook_id,
      event_id: job.event_id,
      reason: endpoint === undefined ? 'endpoint deleted' : 'endpoint disabled',
    });
    return;
  }
  const stored = await getEvent(job.event_id, Math.floor(now() / 1000));
  if (stored === undefined || stored.accountId !== job.account_id) {
    log('warn', 'webhook job dropped: the event is no longer stored', {
      webhook_id: job.webhook_id,
      event_id: job.event_id,
    });
    return;
  }
  await attempt(
    job,
    endpoint,
    stored.type,
    stored.body,
    now,
    deps.resolve ?? systemResolver,
    deps.post ?? postTo,
  );
}

async function secretsOf(endpoint: StoredEndpoint, nowMs: number): Promise<string[]> {
  const secrets = [await openWebhookSecret(endpoint.webhookId, endpoint.secretCiphertext)];
  if (
    endpoint.previousSecretCiphertext !== undefined &&
    endpoint.previousSecretUntil !== undefined &&
    Date.parse(endpoint.previousSecretUntil) > nowMs
  ) {
    secrets.push(await openWebhookSecret(endpoint.webhookId, endpoint.previousSecretCiphertext));
  }
  return secrets;
}

async function attempt(
  job: DeliveryJob,
  endpoint: StoredEndpoint,
  type: string,
  body: string,
  now: () => number,
  resolve: Resolver,
  post: typeof postTo,
): Promise<void> {
  const secrets = await secretsOf(endpoint, now());
  const url = new URL(endpoint.url);
  let statusCode: number | undefined;
  let error: string | undefined;
  const started = now();
  try {
    const address = await resolveTarget(url, targetPolicy(), resolve);
    const sentAt = new Date(now());
    const result = await post(
      url,
      address,
      deliveryHeaders(secrets, job.event_id, sentAt, body),
      body,
      attemptTimeoutMs,
    );
    statusCode = result.statusCode;
    error = result.error;
  } catch (caught) {
    if (!(caught instanceof TargetRefused)) throw caught;
    error = caught.message;
  }
  const verdict = verdictOf(statusCode);
  if (verdict === 'retry' && error === undefined) {
    error =
      statusCode !== undefined && statusCode >= 300 && statusCode < 400
        ? `Redirect (${statusCode}) not followed`
        : `Receiver answered ${statusCode}`;
  }
  const at = new Date(now());
  const next = verdict === 'retry' ? nextAttemptAt(job.attempt, at.getTime(), retrySchedule()) : undefined;

  // The next attempt is queued before this one is recorded: a crash in between repeats an
  // attempt (at least once), never loses one.
  if (verdict === 'retry' && next !== undefined) {
    await enqueueDelivery(
      { ...job, attempt: job.attempt + 1, due_at: next },
      queueDelaySeconds(next, at.getTime()),
    );
  } else if (verdict === 'retry') {
    await sendToDeadLetter(job, error ?? 'failed');
  }
  await recordAttempt(
    endpoint.webhookId,
    {
      eventId: job.event_id,
      type,
      attempt: job.attempt,
      statusCode: statusCode ?? null,
      error: error ?? null,
      at: at.toISOString(),
      nextAttemptAt: next === undefined ? null : new Date(next).toISOString(),
    },
    Math.floor(at.getTime() / 1000) + deliveryRetentionSeconds,
  );
  if (verdict === 'gone') {
    await disableEndpoint(
      endpoint.accountId,
      endpoint.webhookId,
      'The receiver answered 410 Gone',
      at.toISOString(),
    );
  }
  const failed = verdict !== 'delivered';
  log(failed ? 'warn' : 'info', 'webhook attempt', {
    webhook_id: endpoint.webhookId,
    event_id: job.event_id,
    type,
    attempt: job.attempt,
    status_code: statusCode,
    error,
    verdict,
    latency_ms: now() - started,
    dead_lettered: verdict === 'retry' && next === undefined,
  });
  // Metrics (shared/observability/metrics.ts): the stack's dashboard and alarms read these.
  countWebhookDelivery(!failed, verdict === 'retry' && next === undefined);
}
