import { envNumber } from '../platform/config/env.ts';

/**
 * Delivery timings, read once. Defaults follow the queue definition (infra/resources/definitions.ts):
 * visibility 180 s, maxReceiveCount 5, sender timeout 30 s.
 */
export const deliverySettings = {
  /** How long a claim holds a message; longer than one send can take (the sender times out at 30 s). */
  leaseMs: envNumber('SEND_LEASE_SECONDS', 120, { min: 1 }) * 1000,
  /** Attempts before a message is failed for good (matches the queue's maxReceiveCount). */
  maxAttempts: envNumber('MAX_SEND_ATTEMPTS', 5, { min: 1 }),
  /** A `queued` message nobody claimed within this time is queued again by the dispatcher. */
  reconcileAfterMs: envNumber('RECONCILE_AFTER_SECONDS', 300, { min: 1 }) * 1000,
  /**
   * After a failed attempt the lease is released at once for the queue's redelivery; the
   * dispatcher steps in only if no redelivery claimed it within this time (visibility + a minute).
   */
  retryTakeoverMs: envNumber('RETRY_TAKEOVER_SECONDS', 240, { min: 1 }) * 1000,
} as const;

/**
 * When the dispatcher first looks at a message queued at `queuedAtMs` (its watch entry,
 * docs/data-model.md, "Watch entries"): the earlier of the re-enqueue time (nobody claimed it) and
 * the end of a lease taken at once (its sender died). A message sent in time is settled by then,
 * and the dispatcher passes over its entry without a write. UTC ISO, as the entry's sort key.
 */
export function firstWatchAt(queuedAtMs: number): string {
  return new Date(
    queuedAtMs + Math.min(deliverySettings.reconcileAfterMs, deliverySettings.leaseMs),
  ).toISOString();
}
