import * as table from '../../platform/table/gateway.ts';
import { keys, statsWriterOf, statsWriters } from '../../platform/table/keys.ts';
import type { DimensionKind, RowPeriod } from '../model/counters.ts';
import { type SettlingGroup, type StoredCounterRow, settledShard } from '../model/settling.ts';

/**
 * Counter rows of the message statistics (docs/stats.md, docs/data-model.md "Counters"). A row is
 * one dimension on one day as one stream shard counted it; its `seq` is the padded sequence number
 * of the last stream record it has counted. Records of a shard come in order, and only that
 * shard's consumer writes the row, so a record at or below `seq` is already in it: a redelivered
 * record, or a batch done twice, never counts twice. `written_at` (epoch ms) is when the shard's
 * consumer last wrote it: a row old enough is settled (`settleRows`).
 */

/** Counter rows are kept about 13 months (TTL), the longest range a daily query may ask for. */
export const rowRetentionDays = 400;

/** One record's share of a row: `n` more on a counter attribute (`d13`). */
export interface Contribution {
  /** The record's sequence number, padded (`sequenceKey`). */
  sequence: string;
  attribute: string;
  n: number;
}

export interface RowIncrement {
  account: string;
  kind: DimensionKind;
  value: string;
  /** A day row (`date` = the day, `YYYY-MM-DD`) or a week row (`date` = its Monday). */
  period: RowPeriod;
  date: string;
  streamShard: string;
  contributions: Contribution[];
  /** When the row is written (epoch ms); now unless a test says otherwise. */
  writtenAt?: number;
}

const sortKeyOf = (period: RowPeriod, kind: DimensionKind, date: string, value: string, shard: string) =>
  period === 'day' ? keys.statsRow(kind, date, value, shard) : keys.statsWeekRow(kind, date, value, shard);

/** The key of one row: the account's partition for `all`, else the writer partition of its shard. */
const rowKey = (
  account: string,
  kind: DimensionKind,
  period: RowPeriod,
  date: string,
  value: string,
  shard: string,
) => ({
  pk: kind === 'all' ? keys.statsOfAccount(account) : keys.stats(account, statsWriterOf(shard)),
  sk: sortKeyOf(period, kind, date, value, shard),
});

/**
 * Adds the contributions not yet in the row, in one conditional update: optimistically all of them
 * (the row has counted nothing of this batch: `seq` below its first record), else, from the row as
 * the failed condition returned it, those past its `seq`. Returns the contributions it added.
 */
/** The partitions of a dimension kind's rows: the account's own, or its writer partitions. */
const partitionsOf = (account: string, kind: DimensionKind): string[] =>
  kind === 'all'
    ? [keys.statsOfAccount(account)]
    : Array.from({ length: statsWriters }, (_, writer) => keys.stats(account, writer));

/** `#c0 :c0, …`: one ADD clause per counter attribute, its name and amount put in `names` and `values`. */
function addClauses(
  counts: Iterable<[string, number]>,
  names: Record<string, string>,
  values: Record<string, unknown>,
): string[] {
  return Array.from(counts, ([attribute, n], index) => {
    names[`#c${index}`] = attribute;
    values[`:c${index}`] = n;
    return `#c${index} :c${index}`;
  });
}

export async function applyRowIncrement(increment: RowIncrement): Promise<Contribution[]> {
  const key = rowKey(
    increment.account,
    increment.kind,
    increment.period,
    increment.date,
    increment.value,
    increment.streamShard,
  );
  let pending = [...increment.contributions].sort((a, b) => (a.sequence < b.sequence ? -1 : 1));
  let counted: string | undefined;
  for (let attempt = 0; pending.length > 0; attempt++) {
    const totals = new Map<string, number>();
    for (const contribution of pending)
      totals.set(contribution.attribute, (totals.get(contribution.attribute) ?? 0) + contribution.n);
    const names: Record<string, string> = {
      '#seq': 'seq',
      '#expires': 'expires_at',
      '#written': 'written_at',
    };
    const values: Record<string, unknown> = {
      ':last': (pending.at(-1) as Contribution).sequence,
      ':expires': expiryOf(increment.period, increment.date),
      ':written': increment.writtenAt ?? Date.now(),
    };
    const additions = addClauses(totals, names, values);
    let condition: string;
    if (counted === undefined) {
      values[':first'] = (pending[0] as Contribution).sequence;
      condition = 'attribute_not_exists(#seq) OR #seq < :first';
    } else {
      values[':counted'] = counted;
      condition = '#seq = :counted';
    }
    const result = await table.update({
      Key: key,
      UpdateExpression: `ADD ${additions.join(', ')} SET #seq = :last, #expires = :expires, #written = :written`,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    if (result.outcome === 'applied') return pending;
    if (attempt >= 8) throw table.conditionFault(result);
    // Part of this batch is in the row already (a redelivery): keep what comes after it.
    const seq = result.item?.seq;
    if (typeof seq !== 'string') throw table.conditionFault(result);
    counted = seq;
    pending = pending.filter((contribution) => contribution.sequence > seq);
  }
  return [];
}

/** Epoch seconds of the TTL: `rowRetentionDays` after the end of the row's day or week. */
function expiryOf(period: RowPeriod, date: string): number {
  const start = Date.parse(`${date}T00:00:00Z`);
  return Math.floor(start / 1000) + (rowRetentionDays + (period === 'day' ? 1 : 7)) * 86_400;
}

export type CounterRow = StoredCounterRow;

/**
 * Every day row (between two days) or week row (between two Mondays, inclusive) of one dimension
 * kind, with a key condition (never a filter): the account's partition for `all` (one Query), its
 * writer partitions, in parallel, for domains and tags. `read` is the number of rows DynamoDB
 * returned: it grows with days or weeks, values and stream shards, never with messages.
 */
export async function queryCounterRows(
  account: string,
  kind: DimensionKind,
  period: RowPeriod,
  from: string,
  to: string,
): Promise<{ rows: CounterRow[]; read: number }> {
  const prefix = period === 'day' ? `${kind}#` : `w#${kind}#`;
  const pages = await Promise.all(
    partitionsOf(account, kind).map(async (partition) => {
      const rows: CounterRow[] = [];
      const items = await table.queryAll({
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': partition,
          ':from': `${prefix}${from}#`,
          ':to': `${prefix}${to}#~`,
        },
      });
      for (const item of items) {
        const [date = '', value = '', streamShard = ''] = String(item.sk).slice(prefix.length).split('#');
        rows.push({ date, value, streamShard, attributes: item });
      }
      return rows;
    }),
  );
  const rows = pages.flat();
  return { rows, read: rows.length };
}

/**
 * One move of `settlingPlan` (docs/stats.md, "Settled rows"): the rows' counts are added to the
 * dimension's settled row (`settled` in place of the shard id) and the rows deleted, in one
 * transaction, each row only if its mark is still the one it was read with; so two queries settling
 * at once move every count once (the second one's transaction is cancelled, and writes nothing).
 */
export async function settleRows(
  account: string,
  kind: DimensionKind,
  period: RowPeriod,
  move: SettlingGroup,
): Promise<void> {
  const names: Record<string, string> = { '#expires': 'expires_at' };
  const values: Record<string, unknown> = { ':expires': expiryOf(period, move.date) };
  const additions = addClauses(Object.entries(move.counts), names, values);
  const outcome = await table.transact([
    {
      Update: {
        Key: rowKey(account, kind, period, move.date, move.value, settledShard),
        UpdateExpression: `${additions.length > 0 ? `ADD ${additions.join(', ')} ` : ''}SET #expires = :expires`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
    ...move.rows.map((row) => ({
      Delete: {
        Key: rowKey(account, kind, period, move.date, move.value, row.streamShard),
        ConditionExpression: '#seq = :seq',
        ExpressionAttributeNames: { '#seq': 'seq' },
        ExpressionAttributeValues: { ':seq': row.seq },
      },
    })),
  ]);
  // Another query settled these rows first: its transaction won, this one wrote nothing (code 5).
  if (outcome.outcome === 'condition-failed') throw table.conditionFault(outcome);
}
