import {
  type DispatchAction,
  maxQueueDelaySeconds,
  planDueEntry,
} from '../../domain/delivery/dispatch-plan.ts';
import { describeError, log } from '../../observability/log.ts';
import { countMessages } from '../../observability/metrics.ts';
import { shardCount } from '../../repositories/keys.ts';
import {
  type DeliveryMessage,
  dueAtOf,
  markFailed,
  postponeDue,
  queryWork,
  releaseScheduled,
} from '../../repositories/message-delivery.ts';
import { enqueueSend } from '../../repositories/send-queue.ts';
import { deliverySettings } from './settings.ts';

/**
 * The one-minute dispatcher. Reads every shard of the work index (gsi3, never a Scan): scheduled
 * messages due within 15 minutes, and the in-flight messages (queued, processing). It:
 * releases `scheduled` messages into the queue with an SQS delay that ends at `send_at`; queues
 * again `queued` messages nobody claimed in time (an enqueue that failed after the write); queues
 * again `processing` messages whose lease expired (their sender died), or fails them when they
 * have used every attempt. Every move is a conditional write, so overlapping runs are harmless.
 */
export interface DispatchReport {
  released: number;
  requeued: number;
  takenOver: number;
  failed: number;
  errors: number;
}

export async function dispatchDue(
  nowMs: number = Date.now(),
  pageSize = 100,
  maxPages = 20,
): Promise<DispatchReport> {
  const report: DispatchReport = { released: 0, requeued: 0, takenOver: 0, failed: 0, errors: 0 };
  const work: Array<['due' | 'inFlight', number]> = [];
  for (let shard = 0; shard < shardCount.work; shard++) work.push(['due', shard], ['inFlight', shard]);
  let next = 0;
  // A few shards at a time: one run reads every shard, whatever the number of accounts.
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < work.length) {
        const [family, shard] = work[next++] as ['due' | 'inFlight', number];
        await dispatchShard(family, shard, nowMs, pageSize, maxPages, report);
      }
    }),
  );
  return report;
}

async function dispatchShard(
  family: 'due' | 'inFlight',
  shard: number,
  nowMs: number,
  pageSize: number,
  maxPages: number,
  report: DispatchReport,
): Promise<void> {
  let startKey: Record<string, unknown> | undefined;
  let pages = 0;
  do {
    const page = await queryWork(family, shard, {
      untilMs: nowMs + maxQueueDelaySeconds * 1000,
      limit: pageSize,
      ...(startKey === undefined ? {} : { startKey }),
    });
    for (const message of page.items) {
      const action = planDueEntry(
        {
          status: message.status,
          // A processing message's due time is its lease, unless a failed attempt set one.
          dueAtMs:
            message.due_at === undefined && message.lease_until !== undefined
              ? message.lease_until
              : dueAtOf(message.due_at),
          sendAt: message.scheduling?.send_at,
          leaseUntil: message.lease_until,
          attempts: message.attempts,
        },
        nowMs,
        { maxAttempts: deliverySettings.maxAttempts },
      );
      try {
        await apply(message, action, nowMs, report);
      } catch (error) {
        report.errors += 1;
        log('error', 'dispatch failed for a message', {
          message_uuid: message.message_uuid,
          ...describeError(error),
        });
      }
    }
    startKey = page.nextKey;
    pages += 1;
  } while (startKey !== undefined && pages < maxPages);
}

async function apply(
  message: DeliveryMessage,
  action: DispatchAction,
  nowMs: number,
  report: DispatchReport,
): Promise<void> {
  const uuid = message.message_uuid;
  switch (action.action) {
    case 'release-scheduled': {
      // Write first, then enqueue: if the enqueue fails the message is `queued` with a due time,
      // and a later run queues it again. Nothing is lost between the two steps.
      const sendAtMs = nowMs + action.delaySeconds * 1000;
      const released = await releaseScheduled(message, {
        nowMs,
        reconcileAtMs: sendAtMs + deliverySettings.reconcileAfterMs,
        detail: `released by the scheduler for ${new Date(sendAtMs).toISOString()}`,
      });
      if (released === undefined) return;
      await enqueueSend(uuid, message.account_id, action.delaySeconds);
      report.released += 1;
      log('info', 'message state change', {
        message_uuid: uuid,
        status: 'queued',
        delay_seconds: action.delaySeconds,
      });
      return;
    }
    case 're-enqueue-queued':
    case 're-enqueue-expired': {
      const moved = await postponeDue(message, {
        nowMs,
        nextDueMs:
          nowMs +
          (action.action === 're-enqueue-queued'
            ? deliverySettings.reconcileAfterMs
            : deliverySettings.retryTakeoverMs),
        detail:
          action.action === 're-enqueue-queued'
            ? 'queued again: no sender had claimed it'
            : 'queued again: the lease of the previous attempt expired',
      });
      if (moved === undefined) return;
      await enqueueSend(uuid, message.account_id);
      if (action.action === 're-enqueue-queued') report.requeued += 1;
      else report.takenOver += 1;
      log('info', 'message re-enqueued', { message_uuid: uuid, status: message.status });
      return;
    }
    case 'fail': {
      const failed = await markFailed(message, { reason: action.reason, nowMs, from: ['processing'] });
      if (failed !== undefined) {
        report.failed += 1;
        log('warn', 'message state change', { message_uuid: uuid, status: 'failed', reason: action.reason });
        countMessages('failed');
      }
      return;
    }
    case 'expire-hold': {
      const failed = await markFailed(message, { reason: action.reason, nowMs, from: ['waiting'] });
      if (failed !== undefined) {
        report.failed += 1;
        log('warn', 'message state change', { message_uuid: uuid, status: 'failed', reason: action.reason });
      }
      return;
    }
    case 'none':
      return;
  }
}
