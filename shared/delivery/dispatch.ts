import { deliverySettings, enqueueSend, isInFlight } from '../messages/index.ts';
import { mapLimit } from '../platform/concurrency/map-limit.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { countMessages } from '../platform/observability/metrics.ts';
import { shardCount } from '../platform/table/keys.ts';
import {
  type DispatchAction,
  type DueEntry,
  maxQueueDelaySeconds,
  planDueEntry,
  watchAgainAt,
} from './model/dispatch-plan.ts';
import {
  adoptLegacyInFlight,
  advanceDispatchMark,
  type DeliveryMessage,
  deferWatch,
  dueAtOf,
  getDeliveryMessage,
  markFailed,
  postponeDue,
  queryWork,
  readDispatchMarks,
  rearmWatch,
  releaseScheduled,
  type WorkEntry,
  type WorkFamily,
} from './store/message-delivery.ts';

/**
 * The one-minute dispatcher (docs/delivery.md, "Scheduling and reconciliation"). Reads the work
 * index (gsi3, never a Scan), every shard of three entry families:
 * - due entries (`DUE#<n>`) up to 15 minutes ahead: releases `scheduled` messages into the queue
 *   with an SQS delay that ends at `send_at`, and fails `waiting` messages past their hold;
 * - watch entries (`WATCH#<n>`), only forward in time: the entries whose watch time is in the
 *   shard's window `(mark − watchLagMs, now]`. A settled message's entry is passed over; a queued
 *   message nobody claimed in time (an enqueue that failed after the write) is queued again; a
 *   processing one whose lease expired (its sender died, or its attempt failed and no redelivery
 *   came) is queued again or failed after the last attempt; one not due yet has its entry re-armed
 *   to when it will be. Every in-flight message thus keeps an entry ahead of the window. An entry
 *   that could not be handled is put a lease ahead (and logged). The shard's mark moves to the
 *   run's start only when every entry of its window was handled or put ahead, so a failed shard is
 *   read again next run;
 * - the in-flight index of earlier releases (`INFLIGHT#<n>`), every entry: moved to a watch entry.
 * Every move is a conditional write, so overlapping runs are harmless.
 */
export interface DispatchReport {
  released: number;
  requeued: number;
  takenOver: number;
  failed: number;
  /** In-flight messages not due yet whose watch entry moved forward. */
  rearmed: number;
  /** Messages moved from the in-flight index of earlier releases to a watch entry. */
  adopted: number;
  /** Watch entries read (settled messages' included). */
  watched: number;
  errors: number;
}

/**
 * How far before a shard's mark a run starts reading its watch entries. A watch time is at least
 * min(RECONCILE_AFTER_SECONDS, SEND_LEASE_SECONDS) after the write that sets it, and at least this
 * lag after a dispatcher's own write (a re-arm, a move from the old index, an entry put ahead), so an
 * entry is normally on the index long before a window reaches it; the lag
 * covers what could still put an entry behind a mark: the index's propagation (usually well under
 * a second), clocks of different hosts, and a write the SDK kept retrying past the lead (an
 * outage). Every entry of the lag is read twice, so it stays small.
 */
export const watchLagMs = 10_000;

export interface DispatchOptions {
  /** Entries per Query page (and per BatchGetItem). */
  pageSize?: number;
  /** Pages per shard and family in one run; a watch shard that has more records how far it got. */
  maxPages?: number;
  /** Shards read at the same time. */
  concurrency?: number;
  /**
   * Wall-clock time after which a run starts no new page (the function may run 60 s): a shard it
   * leaves records how far it got, so a backlog longer than one run still moves forward.
   */
  budgetMs?: number;
}

export async function dispatchDue(
  nowMs: number = Date.now(),
  options: DispatchOptions = {},
): Promise<DispatchReport> {
  const { pageSize = 100, maxPages = 500, concurrency = 8, budgetMs = 40_000 } = options;
  const deadline = Date.now() + budgetMs;
  const report: DispatchReport = {
    released: 0,
    requeued: 0,
    takenOver: 0,
    failed: 0,
    rearmed: 0,
    adopted: 0,
    watched: 0,
    errors: 0,
  };
  const marks = await readDispatchMarks();
  // Each run starts at another shard, so a run out of budget does not always leave the same ones.
  const first = Math.floor(nowMs / 60_000) % shardCount.work;
  const work: Array<[WorkFamily, number]> = [];
  for (let step = 0; step < shardCount.work; step++) {
    const shard = (first + step) % shardCount.work;
    work.push(['watch', shard], ['due', shard], ['legacy', shard]);
  }
  // A few shards at a time: one run reads every shard, whatever the number of accounts.
  await mapLimit(work, concurrency, async ([family, shard]) => {
    try {
      await dispatchShard(family, shard, nowMs, marks.get(shard), { pageSize, maxPages, deadline }, report);
    } catch (error) {
      report.errors += 1;
      log('error', 'dispatch failed for a work shard', { family, shard, ...describeError(error) });
    }
  });
  return report;
}

async function dispatchShard(
  family: WorkFamily,
  shard: number,
  nowMs: number,
  mark: number | undefined,
  limits: { pageSize: number; maxPages: number; deadline: number },
  report: DispatchReport,
): Promise<void> {
  const fromMs = family === 'watch' && mark !== undefined ? mark - watchLagMs : undefined;
  // A mark ahead of this run (another host's clock ran ahead by more than the lag): nothing to read.
  // Past the run's budget: not started, left to the next run.
  if ((fromMs !== undefined && fromMs >= nowMs) || Date.now() >= limits.deadline) return;
  let startKey: Record<string, unknown> | undefined;
  let lastKey: string | undefined;
  let pages = 0;
  let failures = 0;
  do {
    const page = await queryWork(family, shard, {
      ...(fromMs === undefined ? {} : { fromMs }),
      untilMs: family === 'due' ? nowMs + maxQueueDelaySeconds * 1000 : nowMs,
      limit: limits.pageSize,
      ...(startKey === undefined ? {} : { startKey }),
    });
    if (family === 'watch') report.watched += page.items.length;
    for (const entry of page.unreadable) {
      report.errors += 1;
      log('error', 'dispatch could not read a message', { message_uuid: entry.message_uuid });
      if (!(await deferred(family, entry))) failures += 1;
    }
    for (const message of page.items) {
      try {
        await handleEntry(family, message, nowMs, report);
      } catch (error) {
        report.errors += 1;
        log('error', 'dispatch failed for a message', {
          message_uuid: message.message_uuid,
          ...describeError(error),
        });
        if (!(await deferred(family, message))) failures += 1;
      }
    }
    startKey = page.nextKey;
    if (page.lastKey !== undefined) lastKey = page.lastKey;
    pages += 1;
  } while (startKey !== undefined && pages < limits.maxPages && Date.now() < limits.deadline);
  // An empty window leaves the mark where it is (no write): the next window only grows by a range
  // that held nothing.
  if (family !== 'watch' || failures > 0 || lastKey === undefined) return;
  // Every entry of the window was handled: the mark moves to the run's start. A shard with more
  // than one run reads (its page limit, or the run's budget) records how far it got (the watch time
  // of its last entry), so the next run continues from there instead of starting over.
  const reached = startKey === undefined ? nowMs : Date.parse((lastKey ?? '').split('#')[0] ?? '');
  if (Number.isFinite(reached)) await advanceDispatchMark(shard, reached);
}

/**
 * A watch entry that could not be handled is put a lease ahead (it is logged each time it comes up),
 * so one bad item does not hold its shard's mark: the window would grow with every run until it
 * no longer fit in one. True when the entry is out of the way; false keeps the mark where it is.
 */
async function deferred(family: WorkFamily, entry: WorkEntry): Promise<boolean> {
  if (family !== 'watch') return false;
  try {
    return await deferWatch(entry, Date.now() + deliverySettings.leaseMs);
  } catch (error) {
    log('error', 'dispatch could not put a watch entry ahead', {
      message_uuid: entry.message_uuid,
      ...describeError(error),
    });
    return false;
  }
}

/** The plan's view of a message: its due time is `due_at`, or a claimed message's lease. */
function dueEntryOf(message: DeliveryMessage): DueEntry {
  return {
    status: message.status,
    dueAtMs:
      message.due_at === undefined && message.lease_until !== undefined
        ? message.lease_until
        : dueAtOf(message.due_at),
    sendAt: message.scheduling?.send_at,
    leaseUntil: message.lease_until,
    attempts: message.attempts,
  };
}

async function handleEntry(
  family: WorkFamily,
  message: DeliveryMessage,
  nowMs: number,
  report: DispatchReport,
): Promise<void> {
  if (family === 'due') {
    await apply(message, planDueEntry(dueEntryOf(message), nowMs, deliverySettings), nowMs, report);
    return;
  }
  if (family === 'legacy') {
    if (!message.gsi3pk?.startsWith('INFLIGHT#')) return;
    // In flight: watched from when it is due (no later than a lease from now), so the next run, or
    // a later one, plans it through its watch entry. Settled: it just leaves the old index.
    const at = watchAgainAt(dueEntryOf(message), nowMs, deliverySettings.leaseMs);
    if (await adoptLegacyInFlight(message, notBehind(Math.min(at, nowMs + deliverySettings.leaseMs))))
      report.adopted += 1;
    return;
  }
  await watchEntry(message, nowMs, report);
}

/**
 * One watch entry: act on the message as it is now. When the action finds the message moved on
 * (another run, a sender's claim), it is read again and planned again, so an in-flight message
 * never ends with its entry behind the window.
 */
async function watchEntry(first: DeliveryMessage, nowMs: number, report: DispatchReport): Promise<void> {
  let message: DeliveryMessage | undefined = first;
  for (let attempt = 0; attempt < 4; attempt++) {
    if (message === undefined || !isInFlight(message.status)) return;
    // The entry moved ahead since the index was read: it comes up again then.
    const at = Date.parse(message.gsi3sk?.split('#')[0] ?? '');
    if (message.gsi3pk?.startsWith('WATCH#') && at > nowMs) return;
    const entry = dueEntryOf(message);
    const action = planDueEntry(entry, nowMs, deliverySettings);
    if (action.action === 'none') {
      if (await rearmWatch(message, notBehind(watchAgainAt(entry, nowMs, deliverySettings.leaseMs)))) {
        report.rearmed += 1;
        return;
      }
    } else if (await apply(message, action, nowMs, report)) return;
    message = await getDeliveryMessage(first.message_uuid);
  }
  throw new Error('the message kept changing while its watch entry was handled');
}

/**
 * A watch time the dispatcher writes, at least the lag after the write: the plan counts from the
 * run's start, and a run may write long after it started, after an overlapping run has moved the
 * shard's mark past that start.
 */
const notBehind = (watchAtMs: number): number => Math.max(watchAtMs, Date.now() + watchLagMs);

/** Carries out a plan; false when the message had moved on (its conditional write failed). */
async function apply(
  message: DeliveryMessage,
  action: DispatchAction,
  nowMs: number,
  report: DispatchReport,
): Promise<boolean> {
  const uuid = message.message_uuid;
  switch (action.action) {
    case 'release-scheduled': {
      // Write first, then enqueue: if the enqueue fails the message is `queued` with a due time
      // and a watch entry, and a later run queues it again. Nothing is lost between the two steps.
      const sendAtMs = nowMs + action.delaySeconds * 1000;
      const released = await releaseScheduled(message, {
        nowMs,
        sendAtMs,
        reconcileAtMs: sendAtMs + deliverySettings.reconcileAfterMs,
        detail: `released by the scheduler for ${new Date(sendAtMs).toISOString()}`,
      });
      if (released === undefined) return false;
      await enqueueSend(uuid, message.account_id, action.delaySeconds);
      report.released += 1;
      log('info', 'message state change', {
        message_uuid: uuid,
        status: 'queued',
        delay_seconds: action.delaySeconds,
      });
      return true;
    }
    case 're-enqueue-queued':
    case 're-enqueue-expired': {
      const nextDueMs =
        nowMs +
        (action.action === 're-enqueue-queued'
          ? deliverySettings.reconcileAfterMs
          : deliverySettings.retryTakeoverMs);
      const moved = await postponeDue(message, {
        nowMs,
        nextDueMs,
        // Queued at once: watched as a message added now would be.
        watchAtMs: Math.min(nextDueMs, nowMs + deliverySettings.leaseMs),
        detail:
          action.action === 're-enqueue-queued'
            ? 'queued again: no sender had claimed it'
            : 'queued again: the lease of the previous attempt expired',
      });
      if (moved === undefined) return false;
      await enqueueSend(uuid, message.account_id);
      if (action.action === 're-enqueue-queued') report.requeued += 1;
      else report.takenOver += 1;
      log('info', 'message re-enqueued', { message_uuid: uuid, status: message.status });
      return true;
    }
    case 'fail': {
      const failed = await markFailed(message, { reason: action.reason, nowMs, from: ['processing'] });
      if (failed === undefined) return false;
      report.failed += 1;
      log('warn', 'message state change', { message_uuid: uuid, status: 'failed', reason: action.reason });
      countMessages('failed');
      return true;
    }
    case 'expire-hold': {
      const failed = await markFailed(message, { reason: action.reason, nowMs, from: ['waiting'] });
      if (failed === undefined) return false;
      report.failed += 1;
      log('warn', 'message state change', { message_uuid: uuid, status: 'failed', reason: action.reason });
      return true;
    }
    case 'none':
      return true;
  }
}
