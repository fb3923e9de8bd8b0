/**
 * The local stand-in for an SQS fair queue in front of a Lambda event source mapping (docs/decisions/0024-multi-tenant-fairness.md,
 * "Multi-tenant fairness"). The queue emulator receives fairly (the tenant with the fewest messages
 * in flight first); the local event-source loop receives into this scheduler, which decides which
 * tenant's messages take the invocation slots, by the rule SQS fair queues follow: a tenant with
 * work in flight does not crowd out a tenant without. Pure: no queue, no clock.
 *
 * - Messages are grouped by tenant (`MessageGroupId`; a message without one is a tenant of its own).
 * - At most `slots` invocations run at once, each with up to `batchSize` messages of one tenant.
 * - A tenant that already has an invocation running may start another only while `reserve` slots
 *   stay free after it: those are for tenants with nothing running, so a quiet tenant's message
 *   starts as soon as it is received, however many messages a noisy one has waiting and however
 *   slow they are. A tenant alone still uses `slots − reserve` invocations.
 * - Among the tenants that may start, the one with the fewest invocations running goes first, then
 *   the one served least recently (round robin).
 */
export interface FairSchedulerOptions {
  slots: number;
  batchSize: number;
  /** Slots kept for tenants with nothing running (default: 1 when there are 2 slots or more). */
  reserve?: number;
}

export class FairScheduler<T> {
  private readonly slots: number;
  private readonly batchSize: number;
  private readonly reserve: number;
  private readonly pending = new Map<string, T[]>();
  private readonly running = new Map<string, number>();
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private inFlight = 0;
  private queued = 0;

  constructor(options: FairSchedulerOptions) {
    this.slots = Math.max(1, options.slots);
    this.batchSize = Math.max(1, options.batchSize);
    this.reserve = Math.min(this.slots - 1, Math.max(0, options.reserve ?? (this.slots > 1 ? 1 : 0)));
  }

  /** Messages received and not yet handed to an invocation. */
  get waiting(): number {
    return this.queued;
  }

  /** Invocations running. */
  get active(): number {
    return this.inFlight;
  }

  add(group: string, item: T): void {
    const list = this.pending.get(group);
    if (list === undefined) this.pending.set(group, [item]);
    else list.push(item);
    this.queued += 1;
  }

  /** Removes (and returns) waiting messages that `drop` selects, e.g. those whose visibility ran out. */
  discard(drop: (item: T) => boolean): T[] {
    const dropped: T[] = [];
    for (const [group, list] of this.pending) {
      const kept = list.filter((item) => !drop(item));
      if (kept.length === list.length) continue;
      dropped.push(...list.filter(drop));
      if (kept.length === 0) this.pending.delete(group);
      else this.pending.set(group, kept);
    }
    this.queued -= dropped.length;
    return dropped;
  }

  /** Every waiting message, in no particular order (to keep them hidden on the queue). */
  waitingItems(): T[] {
    return [...this.pending.values()].flat();
  }

  /** The next invocation to start, if a slot is free and a tenant may use it; it counts as running. */
  next(): { group: string; items: T[] } | undefined {
    const free = this.slots - this.inFlight;
    if (free <= 0) return undefined;
    let chosen: string | undefined;
    for (const group of this.pending.keys()) {
      const running = this.running.get(group) ?? 0;
      if (running > 0 && free - 1 < this.reserve) continue;
      if (chosen === undefined) {
        chosen = group;
        continue;
      }
      const best = this.running.get(chosen) ?? 0;
      if (
        running < best ||
        (running === best && (this.lastServed.get(group) ?? -1) < (this.lastServed.get(chosen) ?? -1))
      ) {
        chosen = group;
      }
    }
    if (chosen === undefined) return undefined;
    const list = this.pending.get(chosen) as T[];
    const items = list.splice(0, this.batchSize);
    if (list.length === 0) this.pending.delete(chosen);
    this.queued -= items.length;
    this.inFlight += 1;
    this.running.set(chosen, (this.running.get(chosen) ?? 0) + 1);
    this.lastServed.set(chosen, this.served++);
    return { group: chosen, items };
  }

  /** An invocation of `group` ended. */
  done(group: string): void {
    this.inFlight -= 1;
    const running = (this.running.get(group) ?? 1) - 1;
    if (running > 0) {
      this.running.set(group, running);
      return;
    }
    this.running.delete(group);
    // A tenant with nothing waiting or running is forgotten (tenants without a group id are one
    // message each); should it come back, it counts as not served for a while, which is right.
    if (!this.pending.has(group)) this.lastServed.delete(group);
  }
}
