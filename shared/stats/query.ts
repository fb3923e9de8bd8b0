import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { formatDate, parseDateWithOffset } from '../platform/time/format.ts';
import {
  addCounts,
  bucketsBetween,
  type Counts,
  type DimensionKind,
  daysFrom,
  forEachCount,
  type RowPeriod,
  ratesOf,
  statCounters,
  weekOf,
  zeroCounts,
} from './model/counters.ts';
import { settlingPlan } from './model/settling.ts';
import { maxDailyBuckets, maxHourlyBuckets, type StatsQueryRequest } from './schemas.ts';
import { type CounterRow, queryCounterRows, settleRows } from './store/stats.ts';

/**
 * POST /stats/query-1.0 (docs/stats.md): series and totals from the counter rows the stream
 * consumer keeps. A query reads counter rows only, never a message: one Query per writer partition
 * and dimension, for the days of the range, so the work grows with the days, the domains or tags and
 * the stream shards, not with the number of messages. Rows the shards no longer write are settled
 * on the way (`settleFinishedRows`), so the shards a query meets are those of the last day or so.
 */
export interface StatsAnswer {
  series: Array<{ key: string; points: Array<{ at: string } & Counts> }>;
  totals: Counts & { bounce_rate: number; complaint_rate: number };
}

const invalid = (field: string, message: string) =>
  new ServiceError(Code.InvalidInput, undefined, { details: [{ field, message }] });

type Bucket = ReturnType<typeof bucketsBetween>[number];

/**
 * The points of each value (a domain, a tag, '' for `all`), summed over the stream shards' rows:
 * one `Counts` per bucket of the range. A row's slot (an hour of a day row, a day of a week row)
 * finds its bucket through a table made once per row date; slots outside the range are left out.
 * Daily buckets are consecutive calendar dates, so a week row's days are found by counting from
 * the first.
 */
function tally(
  rows: readonly CounterRow[],
  period: RowPeriod,
  buckets: readonly Bucket[],
): Map<string, Counts[]> {
  const indexOf = new Map(
    period === 'day' ? buckets.map((bucket, index) => [`${bucket.date} ${bucket.hour}`, index]) : [],
  );
  const firstDate = (buckets[0] as Bucket).date;
  const slotTables = new Map<string, Array<number | undefined>>();
  const slotTableOf = (date: string) => {
    let table = slotTables.get(date);
    if (table === undefined) {
      // A day row's hours 0–23; a week row's days 1–7 from its Monday (index 0 unused).
      table =
        period === 'day'
          ? Array.from({ length: 24 }, (_, hour) => indexOf.get(`${date} ${hour}`))
          : weekSlots(daysFrom(firstDate, date), buckets.length);
      slotTables.set(date, table);
    }
    return table;
  };
  const byValue = new Map<string, Counts[]>();
  for (const row of rows) {
    const slots = slotTableOf(row.date);
    const points = byValue.get(row.value) ?? buckets.map(() => zeroCounts());
    byValue.set(row.value, points);
    forEachCount(row.attributes, period, (counter, slot, n) => {
      const index = slots[slot];
      if (index !== undefined) (points[index] as Counts)[counter] += n;
    });
  }
  return byValue;
}

/** The buckets of a week row's days 1–7 (index 0 unused), its Monday `monday` buckets after the first. */
function weekSlots(monday: number, bucketCount: number): Array<number | undefined> {
  return Array.from({ length: 8 }, (_, weekday) => {
    const index = monday + weekday - 1;
    return weekday >= 1 && index >= 0 && index < bucketCount ? index : undefined;
  });
}

export async function queryStats(
  accountId: string,
  request: StatsQueryRequest,
): Promise<StatsAnswer & { rowsRead: number }> {
  const from = parseDateWithOffset(request.date_from);
  const to = parseDateWithOffset(request.date_to);
  if (from === undefined) throw invalid('date_from', 'date_from must be ISO 8601 with an offset');
  if (to === undefined) throw invalid('date_to', 'date_to must be ISO 8601 with an offset');
  if (to < from) throw invalid('date_to', 'date_to must not be before date_from');
  const hourly = request.granularity === 'hour';
  const limit = hourly ? maxHourlyBuckets : maxDailyBuckets;
  // Made only when thrown: a ServiceError captures a stack trace.
  const tooLong = () => invalid('date_to', `At most ${limit} ${hourly ? 'hours' : 'days'} per query`);
  // A first bound on the span itself, so that an absurd range is refused before its buckets are listed.
  if (to.getTime() - from.getTime() > (limit + 1) * (hourly ? 3_600_000 : 86_400_000)) throw tooLong();
  const buckets = bucketsBetween(from, to, request.granularity);
  if (buckets.length > limit) throw tooLong();
  const firstDate = (buckets[0] as (typeof buckets)[number]).date;
  const lastDate = (buckets.at(-1) as (typeof buckets)[number]).date;

  // The account's own rows (one partition) serve the totals and the `all` series; a grouped query
  // reads its dimension's rows too, except by domain, whose rows add up to the account's (each
  // message has exactly one sending domain).
  // The same holds by stream: each message has exactly one.
  const partitioned = request.group_by === 'domain' || request.group_by === 'stream';
  const kinds: DimensionKind[] =
    request.group_by === undefined ? ['all'] : partitioned ? [request.group_by] : ['all', 'tag'];
  // Hourly: the day rows of the range's days; daily: the week rows of its weeks, named by their Mondays.
  const period: RowPeriod = hourly ? 'day' : 'week';
  const [fromRow, toRow] = hourly
    ? [firstDate, lastDate]
    : [weekOf(firstDate).monday, weekOf(lastDate).monday];
  const results = await Promise.all(
    kinds.map((kind) => queryCounterRows(accountId, kind, period, fromRow, toRow)),
  );
  const tallies = new Map(
    kinds.map((kind, index) => [
      kind,
      tally((results[index] as (typeof results)[number]).rows, period, buckets),
    ]),
  );

  const pointsOf = (counts: Counts[]) =>
    counts.map((point, index) => ({ at: formatDate((buckets[index] as Bucket).start), ...point }));
  const isEmpty = (counts: Counts[]) =>
    counts.every((point) => statCounters.every((name) => point[name] === 0));

  const grouped = request.group_by === undefined ? undefined : tallies.get(request.group_by);
  const account = partitioned
    ? buckets.map((_, index) => {
        const counts = zeroCounts();
        for (const series of (grouped as Map<string, Counts[]>).values())
          addCounts(counts, series[index] as Counts);
        return counts;
      })
    : (tallies.get('all')?.get('') ?? buckets.map(() => zeroCounts()));
  const series =
    grouped === undefined
      ? [{ key: 'all', points: pointsOf(account) }]
      : [...grouped.keys()]
          .sort()
          .filter((key) => !isEmpty(grouped.get(key) as Counts[]))
          .map((key) => ({ key, points: pointsOf(grouped.get(key) as Counts[]) }));
  const totals = account.reduce((sum, point) => addCounts(sum, point), zeroCounts());
  await settleFinishedRows(
    accountId,
    period,
    kinds.map((kind, index) => ({ kind, rows: (results[index] as (typeof results)[number]).rows })),
  );
  return {
    series,
    totals: { ...totals, ...ratesOf(totals) },
    rowsRead: results.reduce((sum, result) => sum + result.read, 0),
  };
}

/**
 * Moves the rows this query read that their stream shards can no longer write into their settled
 * rows (docs/stats.md, "Settled rows"), so the next query reads fewer. The answer is already made
 * from what was read; a move that fails (another query moved the rows first, a store fault) changes
 * nothing and is left for a later query.
 */
async function settleFinishedRows(
  accountId: string,
  period: RowPeriod,
  read: ReadonlyArray<{ kind: DimensionKind; rows: readonly CounterRow[] }>,
): Promise<void> {
  const now = Date.now();
  const moves = read.flatMap(({ kind, rows }) =>
    settlingPlan(rows, period, now).map((move) => ({ kind, move })),
  );
  const results = await Promise.allSettled(
    moves.map(({ kind, move }) => settleRows(accountId, kind, period, move)),
  );
  const failed = results.filter((result) => result.status === 'rejected');
  if (failed.length > 0)
    log('warn', 'settling counter rows failed; a later query will try again', {
      moves: moves.length,
      failed: failed.length,
      ...describeError((failed[0] as PromiseRejectedResult).reason),
    });
}
