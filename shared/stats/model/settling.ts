import { counterAttribute, dayOfWeekAttribute, forEachCount, type RowPeriod } from './counters.ts';

/**
 * Settling counter rows (docs/stats.md, "Settled rows"). Each stream shard counts into rows of its
 * own, which is what makes the counts exact; but on AWS a stream's shards are replaced every few
 * hours, one per table partition, so without settling a week's rows would grow with the partitions
 * and the hours. A row its shard last wrote more than `settleAfterMs` ago can no longer receive a
 * record it has already counted (the stream keeps records 24 hours), so its counts can move into
 * the dimension's one settled row, and the row go, without any record ever counting twice: a later
 * record of the same shard starts a new row, past the old mark.
 */

/** The stream's 24-hour retention, plus 2 hours for an invocation in flight and clock skew. */
export const settleAfterMs = 26 * 3_600_000;

/** The stream shard part of a settled row's key: no stream shard is named so. */
export const settledShard = 'settled';

/** A stored counter row as the query reads it. */
export interface StoredCounterRow {
  date: string;
  value: string;
  streamShard: string;
  /** The stored item: counter attributes, keys, `seq`, `written_at`, `expires_at`. */
  attributes: Record<string, unknown>;
}

/** One move: shard rows of one date and value into their settled row, in one transaction. */
export interface SettlingGroup {
  date: string;
  value: string;
  /** The shards' rows to move, each with the mark it was read with (the move's condition). */
  rows: Array<{ streamShard: string; seq: string }>;
  /** Their counts added up, by counter attribute (`d13`, `d3`). */
  counts: Record<string, number>;
}

const isSettleable = (row: StoredCounterRow, now: number): boolean => {
  const writtenAt = row.attributes.written_at;
  return (
    row.streamShard !== settledShard &&
    typeof row.attributes.seq === 'string' &&
    typeof writtenAt === 'number' &&
    now - writtenAt >= settleAfterMs
  );
};

/** Rows one move takes: DynamoDB takes 100 actions in a transaction, the settled row's update among them. */
export const rowsPerMove = 99;

/**
 * The moves worth making among the rows of one dimension kind and period: per date and value, the
 * shards' rows old enough to move, when that makes fewer rows (two or more of them, or one beside
 * an existing settled row), in moves of at most `rowsPerMove` rows, each with the counts of its own.
 */
export function settlingPlan(
  rows: readonly StoredCounterRow[],
  period: RowPeriod,
  now: number,
): SettlingGroup[] {
  const groups = new Map<string, { settled: boolean; rows: StoredCounterRow[] }>();
  for (const row of rows) {
    const id = `${row.date}\u0000${row.value}`;
    let group = groups.get(id);
    if (group === undefined) {
      group = { settled: false, rows: [] };
      groups.set(id, group);
    }
    if (row.streamShard === settledShard) group.settled = true;
    else if (isSettleable(row, now)) group.rows.push(row);
  }
  const plan: SettlingGroup[] = [];
  for (const group of groups.values()) {
    if (group.rows.length < (group.settled ? 1 : 2)) continue;
    for (let start = 0; start < group.rows.length; start += rowsPerMove)
      plan.push(moveOf(group.rows.slice(start, start + rowsPerMove), period));
  }
  return plan;
}

function moveOf(rows: readonly StoredCounterRow[], period: RowPeriod): SettlingGroup {
  const counts: Record<string, number> = {};
  for (const row of rows)
    forEachCount(row.attributes, period, (counter, slot, n) => {
      const attribute =
        period === 'day' ? counterAttribute(counter, slot) : dayOfWeekAttribute(counter, slot);
      counts[attribute] = (counts[attribute] ?? 0) + n;
    });
  const first = rows[0] as StoredCounterRow;
  return {
    date: first.date,
    value: first.value,
    rows: rows.map((row) => ({ streamShard: row.streamShard, seq: row.attributes.seq as string })),
    counts,
  };
}
