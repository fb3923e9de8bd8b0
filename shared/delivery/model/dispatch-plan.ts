import { holdExpiredDetail } from '../../messages/index.ts';
/**
 * What the dispatcher does with one entry of the due index (gsi3), as a pure decision.
 * See docs/delivery.md ("Scheduling and reconciliation").
 */

/** SQS's longest message delay. */
export const maxQueueDelaySeconds = 15 * 60;

export interface DueEntry {
  status: string;
  /** Epoch ms of the entry's due_at (its gsi3 sort key). */
  dueAtMs: number;
  sendAt?: string;
  leaseUntil?: number;
  attempts?: number;
}

export interface DispatchSettings {
  /** A `processing` message whose lease expired this many times is failed instead of retried. */
  maxAttempts: number;
}

export type DispatchAction =
  /** scheduled → queued, and a queue entry delayed until send_at. */
  | { action: 'release-scheduled'; delaySeconds: number }
  /** queued for too long without a claim (a lost enqueue): queue it again. */
  | { action: 're-enqueue-queued' }
  /** processing with an expired lease (its sender died): queue it again so a sender takes it over. */
  | { action: 're-enqueue-expired' }
  /** processing with an expired lease and no attempts left. */
  | { action: 'fail'; reason: string }
  /** waiting (manual-wait) past the longest hold: failed, visibly, instead of kept forever. */
  | { action: 'expire-hold'; reason: string }
  /** not due yet, or no longer in a state the dispatcher acts on. */
  | { action: 'none' };

export function planDueEntry(entry: DueEntry, nowMs: number, settings: DispatchSettings): DispatchAction {
  switch (entry.status) {
    case 'scheduled': {
      const sendAtMs = entry.sendAt === undefined ? entry.dueAtMs : Date.parse(entry.sendAt);
      const at = Number.isNaN(sendAtMs) ? entry.dueAtMs : sendAtMs;
      const waitMs = at - nowMs;
      if (waitMs > maxQueueDelaySeconds * 1000) return { action: 'none' };
      return { action: 'release-scheduled', delaySeconds: Math.max(0, Math.ceil(waitMs / 1000)) };
    }
    case 'queued':
      return entry.dueAtMs <= nowMs ? { action: 're-enqueue-queued' } : { action: 'none' };
    case 'waiting':
      return entry.dueAtMs <= nowMs
        ? { action: 'expire-hold', reason: holdExpiredDetail }
        : { action: 'none' };
    case 'processing': {
      if (entry.dueAtMs > nowMs || entry.leaseUntil === undefined || entry.leaseUntil > nowMs) {
        return { action: 'none' };
      }
      if ((entry.attempts ?? 0) >= settings.maxAttempts) {
        return {
          action: 'fail',
          reason: `Sending did not complete after ${entry.attempts} attempts`,
        };
      }
      return { action: 're-enqueue-expired' };
    }
    default:
      return { action: 'none' };
  }
}

/**
 * When the dispatcher should look again at an in-flight message its watch entry brought up but the
 * plan left alone (`none`: not due yet): a queued message at its re-enqueue time, or sooner, at the
 * end of a lease a sender could take now; a processing one when its lease (or the take-over time
 * after a failed attempt) ends. Always after `nowMs`, so the next run's window holds it.
 */
export function watchAgainAt(entry: DueEntry, nowMs: number, leaseMs: number): number {
  const finite = (value: number | undefined): value is number =>
    value !== undefined && Number.isFinite(value);
  let at: number;
  if (entry.status === 'queued')
    at = finite(entry.dueAtMs) ? Math.min(entry.dueAtMs, nowMs + leaseMs) : nowMs + leaseMs;
  else {
    const times = [entry.dueAtMs, entry.leaseUntil].filter(finite);
    at = times.length === 0 ? nowMs + leaseMs : Math.max(...times);
  }
  return Math.max(at, nowMs + 1);
}
