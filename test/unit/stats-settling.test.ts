import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { counterAttribute, dayOfWeekAttribute } from '../../shared/stats/model/counters.ts';
import {
  rowsPerMove,
  type StoredCounterRow,
  settleAfterMs,
  settledShard,
  settlingPlan,
} from '../../shared/stats/model/settling.ts';

const now = Date.parse('2026-11-20T12:00:00Z');
const old = now - settleAfterMs;
const row = (
  streamShard: string,
  counts: Record<string, number>,
  writtenAt: number | null = old,
  date = '2026-11-18',
  value = '',
): StoredCounterRow => ({
  date,
  value,
  streamShard,
  attributes: {
    pk: 'STATS#acct',
    sk: `all#${date}#${value}#${streamShard}`,
    ...(streamShard === settledShard ? {} : { seq: `seq-${streamShard}` }),
    ...(writtenAt === null ? {} : { written_at: writtenAt }),
    expires_at: 1,
    ...counts,
  },
});

describe('settling counter rows', () => {
  test('rows their shards wrote long enough ago move together, with their counts added up', () => {
    const plan = settlingPlan(
      [
        row('shard-a', { [counterAttribute('delivered', 9)]: 2, [counterAttribute('sent', 9)]: 2 }),
        row('shard-b', { [counterAttribute('delivered', 9)]: 3, [counterAttribute('bounced', 23)]: 1 }),
      ],
      'day',
      now,
    );
    assert.deepEqual(plan, [
      {
        date: '2026-11-18',
        value: '',
        rows: [
          { streamShard: 'shard-a', seq: 'seq-shard-a' },
          { streamShard: 'shard-b', seq: 'seq-shard-b' },
        ],
        counts: { d09: 5, s09: 2, b23: 1 },
      },
    ]);
  });

  test('a row written less than the stream retention and its margin ago stays, and so does a row without its time', () => {
    const plan = settlingPlan(
      [
        row('shard-a', { d09: 1 }),
        row('shard-b', { d09: 1 }, old + 1),
        row('shard-c', { d09: 1 }, null),
        row('shard-d', { d09: 1 }),
      ],
      'day',
      now,
    );
    assert.deepEqual(
      plan.flatMap((move) => move.rows.map((moved) => moved.streamShard)),
      ['shard-a', 'shard-d'],
    );
    assert.ok(settleAfterMs > 24 * 3_600_000, 'past the stream retention');
  });

  test('one lone row moves only beside a settled row (otherwise it would only change its name)', () => {
    assert.deepEqual(settlingPlan([row('shard-a', { d09: 1 })], 'day', now), []);
    const plan = settlingPlan([row(settledShard, { d09: 4 }), row('shard-a', { d09: 1 })], 'day', now);
    assert.deepEqual(plan, [
      {
        date: '2026-11-18',
        value: '',
        rows: [{ streamShard: 'shard-a', seq: 'seq-shard-a' }],
        counts: { d09: 1 },
      },
    ]);
    // The settled row itself never moves.
    assert.deepEqual(
      settlingPlan([row(settledShard, { d09: 4 }), row(settledShard, { d09: 1 })], 'day', now),
      [],
    );
  });

  test('each date and value is its own group; week rows move their days', () => {
    const week = (shard: string, value: string, day: number) =>
      row(shard, { [dayOfWeekAttribute('accepted', day)]: 1 }, old, '2026-11-16', value);
    const plan = settlingPlan(
      [week('a', 'x.test', 3), week('b', 'x.test', 7), week('a', 'y.test', 4), week('c', 'z.test', 5)],
      'week',
      now,
    );
    assert.deepEqual(
      plan.map((move) => [move.value, move.counts]),
      [['x.test', { a3: 1, a7: 1 }]],
    );
  });

  test('a group larger than one transaction moves in parts, each with the counts of its own rows', () => {
    const rows = Array.from({ length: rowsPerMove * 2 + 5 }, (_, index) => row(`shard-${index}`, { d01: 1 }));
    const plan = settlingPlan(rows, 'day', now);
    assert.deepEqual(
      plan.map((move) => [move.rows.length, move.counts.d01]),
      [
        [rowsPerMove, rowsPerMove],
        [rowsPerMove, rowsPerMove],
        [5, 5],
      ],
    );
  });
});
