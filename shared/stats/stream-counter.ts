import { messageLabelsOf, messageSnapshotOf } from '../messages/index.ts';
import { describeError, log } from '../platform/observability/log.ts';
import type { DomainCounted } from '../platform/observability/metric-names.ts';
import { countForDomain } from '../platform/observability/metrics.ts';
import type { TableChange } from '../platform/table/change.ts';
import { hitCounters, hitItemOf } from '../tracking/index.ts';
import {
  bucketOf,
  countedEvents,
  counterAttribute,
  counterOfAttribute,
  dayOfWeekAttribute,
  dimensionsOf,
  sequenceKey,
  weekOf,
} from './model/counters.ts';
import { applyRowIncrement, type Contribution, type RowIncrement } from './store/stats.ts';

/**
 * The table stream's counting consumer (docs/stats.md): every committed change of a message item
 * adds its counts (`countedEvents`) to the counter rows of its account, sending domain and tags:
 * the hour of the server's time zone it happened in to the day's row, the day to the week's row.
 * A batch writes each row it touches once, so the writes follow the batches, not the messages.
 *
 * Exactness: each row remembers the last record of its stream shard it counted (`seq`), and only
 * that shard's consumer writes it; the shard id comes with the batch because the mapping uses a
 * tumbling window (functions/stats-counter reads it off the event). On any failure this throws, the
 * whole batch is reported failed and done again: the rows already written skip what they have.
 */
export async function countChanges(changes: readonly TableChange[], streamShard: string): Promise<void> {
  const rows = [...rowsOf(changes, streamShard).values()];
  const applied = await Promise.all(rows.map(applyRowIncrement));
  publishDomainFigures(rows, applied);
}

const domainCounted = new Set<string>(['sent', 'delivered', 'bounced', 'complained']);

/** Per-domain figures for the dashboard, from what was added this time only. */
function publishDomainFigures(rows: readonly RowIncrement[], applied: readonly Contribution[][]): void {
  rows.forEach((row, index) => {
    // Each count is in a day row and a week row: the day rows' are published.
    if (row.kind !== 'domain' || row.period !== 'day') return;
    const counts: Partial<Record<DomainCounted, number>> = {};
    for (const contribution of applied[index] ?? []) {
      const counter = counterOfAttribute(contribution.attribute);
      if (counter === undefined || !domainCounted.has(counter)) continue;
      counts[counter as DomainCounted] = (counts[counter as DomainCounted] ?? 0) + contribution.n;
    }
    countForDomain(row.value, counts);
  });
}

/** The batch's counts, grouped by the row each goes to (account, dimension, day, stream shard). */
function rowsOf(changes: readonly TableChange[], streamShard: string): Map<string, RowIncrement> {
  const rows = new Map<string, RowIncrement>();
  for (const change of changes) {
    const sequence = change.sequenceNumber;
    if (change.kind === 'REMOVE' || sequence === undefined) continue;
    let counted: ReturnType<typeof countsOfChange>;
    try {
      counted = countsOfChange(change);
    } catch (error) {
      // A record that cannot be read (a corrupt image) would fail the same way at every retry and
      // hold the shard's counting back for a day: it is logged and left out.
      log('error', 'a stream record could not be counted; left out', {
        sequence_number: sequence,
        ...describeError(error),
      });
      continue;
    }
    if (counted === undefined) continue;
    for (const event of counted.events) {
      const { date, hour } = bucketOf(event.at);
      const { monday, weekday } = weekOf(date);
      // The hour in the day's row, the day in the week's row.
      const slots = [
        { period: 'day' as const, date, attribute: counterAttribute(event.counter, hour) },
        { period: 'week' as const, date: monday, attribute: dayOfWeekAttribute(event.counter, weekday) },
      ];
      for (const dimension of dimensionsOf(counted.labels))
        for (const slot of slots) {
          const id = [counted.labels.accountId, dimension.kind, dimension.value, slot.period, slot.date].join(
            '\u0000',
          );
          let row = rows.get(id);
          if (row === undefined) {
            row = {
              account: counted.labels.accountId,
              kind: dimension.kind,
              value: dimension.value,
              period: slot.period,
              date: slot.date,
              streamShard,
              contributions: [],
            };
            rows.set(id, row);
          }
          row.contributions.push({ sequence: sequenceKey(sequence), attribute: slot.attribute, n: 1 });
        }
    }
  }
  return rows;
}

/** What one change of a message item or a tracking record counts, and under what (undefined: neither). */
function countsOfChange(change: TableChange) {
  const hit = hitItemOf(change.after);
  if (hit !== undefined) {
    const labels = {
      accountId: hit.account_id,
      tenant: hit.tenant,
      stream: hit.stream ?? ('transactional' as const),
      tags: hit.tags ?? [],
      createdAt: hit.first_at,
    };
    const events = hitCounters(hitItemOf(change.before), hit).map((counter) => ({
      counter,
      at: hit.last.at,
    }));
    return { labels, events };
  }
  const after = messageSnapshotOf(change.after);
  const labels = messageLabelsOf(change.after);
  if (after === undefined || labels === undefined) return undefined;
  const before = messageSnapshotOf(change.before);
  const events = countedEvents(before, after, labels);
  const unreadable = events.find((event) => Number.isNaN(Date.parse(event.at)));
  if (unreadable !== undefined) throw new Error(`a ${unreadable.counter} count has no readable time`);
  return { labels, events };
}
