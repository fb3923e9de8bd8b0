import { log } from '../platform/observability/log.ts';
import { countWebhookDelivery } from '../platform/observability/metrics.ts';
import { formatDate } from '../platform/time/format.ts';
import { deliveryRetentionSeconds, pauseSchedule, retrySchedule, targetPolicy } from './config.ts';
import { attemptPost, type postTo, type Resolver, systemResolver } from './http-target.ts';
import { afterFailure, decideJob, trialWindowMs } from './model/endpoint-health.ts';
import {
  attemptTimeoutMs,
  earlyToleranceMs,
  nextAttemptAt,
  queueDelaySeconds,
  verdictOf,
} from './model/retry-schedule.ts';
import { openWebhookSecret } from './secrets.ts';
import { deliveryHeaders } from './signing.ts';
import {
  claimEndpointTrial,
  type DeliveryJob,
  disableEndpoint,
  enqueueDelivery,
  getEndpoint,
  getEvent,
  parseDeliveryJob,
  pauseEndpoint,
  recordAttempt,
  recordEndpointFailure,
  recordEndpointSuccess,
  type StoredEndpoint,
  sendToDeadLetter,
} from './store/webhooks.ts';

/**
 * The webhook queue's consumer (docs/webhooks.md, "Delivery"): one job = one attempt to deliver one
 * event to one endpoint. 2xx: done. 410: the endpoint is disabled. Anything else: the next attempt
 * is queued on the retry schedule (waits beyond SQS's 15 minutes are re-queued with what remains);
 * after the last one the job goes to the dead-letter queue. Every attempt is recorded. A job whose
 * processing fails (a store down) throws: functions/webhook-delivery reports it in
 * `batchItemFailures` and it comes back, so a crash loses nothing; delivery is at least once.
 *
 * No endpoint holds more than its share of the workers (docs/webhooks.md, "Failing endpoints"):
 * - one attempt per endpoint at a time in an invocation: a batch's jobs for one endpoint go one
 *   after the other (different endpoints in parallel; `endpointOfJob` names the lane), and a job
 *   that could not finish before the invocation's end waits for a later one instead of starting;
 * - an endpoint that keeps failing is paused: its jobs wait without an attempt until the pause ends,
 *   then a single trial attempt decides; after 5 days of failures it is disabled.
 * Waiting jobs go back to the queue with a delay; they are not attempts and use none of the retry
 * schedule.
 */
export interface DeliveryDependencies {
  now?: () => number;
  resolve?: Resolver;
  /** The HTTP call (tests inject faults here). */
  post?: typeof postTo;
  /** Epoch ms by which the invocation must have answered (Lambda's remaining time). */
  deadline?: number;
}

/** Time kept free at the end of an invocation, beyond one attempt's deadline. */
const invocationMarginMs = 2_000;

/** The endpoint a job's body is for: the batch's jobs for one endpoint run one after another. */
export function endpointOfJob(body: string): string | undefined {
  return parseDeliveryJob(body)?.webhook_id;
}

/** Back to the queue until `untilMs` (plus a little jitter, so waiting jobs do not return at once). */
async function wait(job: DeliveryJob, untilMs: number, nowMs: number, reason: string): Promise<void> {
  const jitter = Math.floor(Math.random() * Math.min(30_000, Math.max(1_000, (untilMs - nowMs) / 10)));
  const due = Math.max(untilMs, nowMs) + jitter;
  await enqueueDelivery({ ...job, due_at: due }, queueDelaySeconds(due, nowMs));
  log('info', 'webhook job waits', {
    webhook_id: job.webhook_id,
    event_id: job.event_id,
    attempt: job.attempt,
    until: new Date(due).toISOString(),
    reason,
  });
}

/** One job off the webhook queue (its body): one attempt, a wait, or nothing; throws to come back. */
export async function deliverWebhookJob(body: string, deps: DeliveryDependencies = {}): Promise<void> {
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
  const decision = decideJob(endpoint.health, now());
  if (decision.action === 'wait') {
    await wait(job, decision.untilMs, now(), 'endpoint paused after failures in a row');
    return;
  }
  if (deps.deadline !== undefined && deps.deadline - now() < attemptTimeoutMs + invocationMarginMs) {
    await wait(job, now(), now(), 'no time left in this invocation for a whole attempt');
    return;
  }
  if (decision.trial) {
    const trialEnd = now() + trialWindowMs;
    const claimed = await claimEndpointTrial(
      endpoint.accountId,
      endpoint.webhookId,
      endpoint.health.pausedUntil as string,
      new Date(trialEnd).toISOString(),
    );
    if (!claimed) {
      await wait(job, trialEnd, now(), 'another job makes the trial attempt');
      return;
    }
  }
  const stored = await getEvent(job.event_id, Math.floor(now() / 1000));
  if (stored === undefined || stored.accountId !== job.account_id) {
    log('warn', 'webhook job dropped: the event is no longer stored', {
      webhook_id: job.webhook_id,
      event_id: job.event_id,
    });
    return;
  }
  await attempt(job, endpoint, stored.type, stored.body, now, deps);
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
  deps: DeliveryDependencies,
): Promise<void> {
  const secrets = await secretsOf(endpoint, now());
  // The attempt is recorded at its start, and the next one is timed from it: neither shows how long
  // the target took to answer or to refuse (which would tell a port's state).
  const at = new Date(now());
  const result = await attemptPost(
    new URL(endpoint.url),
    deliveryHeaders(secrets, job.event_id, at, body),
    body,
    {
      policy: targetPolicy(),
      resolve: deps.resolve ?? systemResolver,
      timeoutMs: attemptTimeoutMs,
      ...(deps.post === undefined ? {} : { post: deps.post }),
    },
  );
  const { statusCode } = result;
  let error = result.error;
  const verdict = verdictOf(statusCode);
  if (verdict === 'retry' && error === undefined) {
    error =
      statusCode !== undefined && statusCode >= 300 && statusCode < 400
        ? `Redirect (${statusCode}) not followed`
        : `Receiver answered ${statusCode}`;
  }
  const next = verdict === 'retry' ? nextAttemptAt(job.attempt, at.getTime(), retrySchedule()) : undefined;

  // The next attempt is queued before this one is recorded: a crash in between repeats an
  // attempt (at least once), never loses one.
  if (verdict === 'retry' && next !== undefined) {
    await enqueueDelivery({ ...job, attempt: job.attempt + 1, due_at: next }, queueDelaySeconds(next, now()));
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
  } else if (verdict === 'delivered') {
    if (endpoint.health.consecutiveFailures > 0)
      await recordEndpointSuccess(endpoint.accountId, endpoint.webhookId);
  } else {
    await recordFailure(endpoint, now());
  }
  const failed = verdict !== 'delivered';
  log(failed ? 'warn' : 'info', 'webhook attempt', {
    webhook_id: endpoint.webhookId,
    event_id: job.event_id,
    type,
    attempt: job.attempt,
    status_code: statusCode,
    error,
    cause: result.cause,
    verdict,
    latency_ms: now() - at.getTime(),
    dead_lettered: verdict === 'retry' && next === undefined,
  });
  // Metrics (shared/platform/observability/metrics.ts): the stack's dashboard and alarms read these.
  countWebhookDelivery(!failed, verdict === 'retry' && next === undefined);
}

/** One more failure in a row: pause the endpoint's jobs from the 5th on, disable it after 5 days. */
async function recordFailure(endpoint: StoredEndpoint, nowMs: number): Promise<void> {
  const at = new Date(nowMs).toISOString();
  const streak = await recordEndpointFailure(endpoint.accountId, endpoint.webhookId, at);
  if (streak === undefined) return;
  const outcome = afterFailure(streak, nowMs, formatDate, pauseSchedule());
  if (outcome.disable !== undefined) {
    await disableEndpoint(endpoint.accountId, endpoint.webhookId, outcome.disable, at);
    log('warn', 'webhook endpoint disabled', {
      webhook_id: endpoint.webhookId,
      consecutive_failures: streak.consecutiveFailures,
      failing_since: streak.failingSince,
    });
  } else if (outcome.pausedUntil !== undefined) {
    await pauseEndpoint(
      endpoint.accountId,
      endpoint.webhookId,
      streak.consecutiveFailures,
      outcome.pausedUntil,
    );
    log('warn', 'webhook endpoint paused', {
      webhook_id: endpoint.webhookId,
      consecutive_failures: streak.consecutiveFailures,
      paused_until: outcome.pausedUntil,
    });
  }
}
