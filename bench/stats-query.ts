import { randomUUID } from 'node:crypto';
import { dateAfter, dayOfWeekAttribute, sequenceKey, weekOf } from '../shared/stats/model/counters.ts';
import { settleAfterMs } from '../shared/stats/model/settling.ts';
import { queryStats } from '../shared/stats/query.ts';
import { applyRowIncrement, type RowIncrement } from '../shared/stats/store/stats.ts';
import { seedEach } from './seeding.ts';
import { type Caller, call } from './service.ts';
import { figure, fmt, fmtFigure, progress } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * Statistics (docs/benchmarks.md, section 10; docs/stats.md): a 30-day daily stats query against a
 * one-message query by uuid, side by side in each round, for the accounts section 4 seeded (1,000
 * and 100,000 messages, whose counts the host's counting consumer made from the table stream as
 * they were written). The counter rows a query reads are counted too: they must not grow with the
 * number of messages.
 */
export interface StatsBenchAccount {
  account: string;
  who: Caller;
  messages: number;
}

const range = { date_from: '2026-01-15T00:00:00+00:00', date_to: '2026-02-14T00:00:00+00:00' } as const;

/**
 * What AWS's shard turnover would leave without settling: the week rows of one account counted by
 * 6 stream shards a day (one table partition, a shard every 4 hours) over the 30 days of the range,
 * all but the last day's written more than 26 hours ago. Returns the rows the first daily query
 * reads (and settles) and the rows the next one reads, and the weeks the range touches (the
 * settled rows there are then).
 */
async function shardTurnover(): Promise<{
  shards: number;
  weeks: number;
  first: number;
  next: number;
  sameCounts: boolean;
}> {
  const account = `bench-turnover-${randomUUID().slice(0, 8)}`;
  const shardsPerDay = 6;
  const days = 30;
  const long = Date.now() - settleAfterMs - 60_000;
  const mondays = new Set<string>();
  const increments = Array.from({ length: days * shardsPerDay }, (_, index) => {
    const day = dateAfter(range.date_from.slice(0, 10), Math.floor(index / shardsPerDay));
    const { monday, weekday } = weekOf(day);
    mondays.add(monday);
    return {
      account,
      kind: 'all',
      value: '',
      period: 'week',
      date: monday,
      streamShard: `shardId-turnover-${index}`,
      writtenAt: index >= (days - 1) * shardsPerDay ? Date.now() : long,
      contributions: [
        {
          sequence: sequenceKey('1'),
          attribute: dayOfWeekAttribute('delivered', weekday),
          n: 5,
        },
      ],
    } satisfies RowIncrement;
  });
  // Seeding, bounded and retried (bench/seeding.ts): the counter rows are the data, not the measurement.
  await seedEach(increments, applyRowIncrement, 'counter rows');
  const first = await queryStats(account, { ...range, granularity: 'day' });
  const next = await queryStats(account, { ...range, granularity: 'day' });
  return {
    shards: days * shardsPerDay,
    weeks: mondays.size,
    first: first.rowsRead,
    next: next.rowsRead,
    sameCounts:
      JSON.stringify(first.totals) === JSON.stringify(next.totals) &&
      first.totals.delivered === days * shardsPerDay * 5,
  };
}

/** Waits until the counting consumer has counted every seeded message of the account. */
async function counted(entry: StatsBenchAccount): Promise<void> {
  const deadline = Date.now() + 900_000;
  const everything = { date_from: '2026-01-01T00:00:00+00:00', date_to: '2026-04-05T00:00:00+00:00' };
  for (;;) {
    const { totals } = await queryStats(entry.account, { ...everything, granularity: 'day' });
    if (totals.accepted >= entry.messages) return;
    if (Date.now() > deadline)
      throw new Error(`only ${totals.accepted}/${entry.messages} messages counted in 15 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

export async function statsSection(small: StatsBenchAccount, large: StatsBenchAccount, rounds: number) {
  progress('10 statistics: waiting for the counting consumer to count the seeded messages');
  await counted(small);
  await counted(large);
  const first = await call(large.who, 'POST', '/message/query-1.0', { filters: { limit: 1 } });
  const uuid = first.body?.data?.messages?.[0]?.message_uuid as string;
  if (uuid === undefined) throw new Error(`no message to query: ${JSON.stringify(first.body)}`);
  const times = { uuid: [] as number[], stats: [] as number[], ratio: [] as number[] };
  for (let round = -2; round < rounds; round++) {
    // Alternate which goes first, so neither always finds the host warmer.
    const pair = [
      () => call(large.who, 'POST', '/message/query-1.0', { message_uuid: uuid }),
      () => call(large.who, 'POST', '/stats/query-1.0', { ...range, granularity: 'day' }),
    ] as const;
    const elapsed: number[] = [0, 0];
    for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const t0 = performance.now();
      const answer = await (pair[index] as () => ReturnType<typeof call>)();
      elapsed[index] = performance.now() - t0;
      if (answer.status !== 200) throw new Error(`query failed: ${JSON.stringify(answer.body)}`);
    }
    if (round < 0) continue;
    times.uuid.push(elapsed[0] as number);
    times.stats.push(elapsed[1] as number);
    times.ratio.push((elapsed[1] as number) / (elapsed[0] as number));
  }
  const rowsRead = async (entry: StatsBenchAccount) =>
    (await queryStats(entry.account, { ...range, granularity: 'day' })).rowsRead;
  const read = { small: await rowsRead(small), large: await rowsRead(large) };
  const turnover = await shardTurnover();
  const ratio = figure(times.ratio);
  progress(
    `  by uuid ${fmt(figure(times.uuid).median)} ms, stats ${fmt(figure(times.stats).median)} ms (ratio ${fmt(ratio.median, 2)}); rows read ${read.small} vs ${read.large}`,
  );
  return [
    '### 10. Statistics (30-day daily query vs one message by uuid)',
    '',
    `A daily \`POST /stats/query-1.0\` over 30 days (${range.date_from} to ${range.date_to}) and a \`POST /message/query-1.0\` by uuid, side by side in each of ${rounds} rounds (alternating which goes first), for the account with ${large.messages.toLocaleString('en')} messages. The counts were made by the host's counting consumer from the table stream as section 4 wrote the messages. Rows read: counter rows DynamoDB returned to the stats query.`,
    '',
    '| query | latency ms | items read |',
    '|---|---:|---:|',
    `| one message by uuid | ${fmtFigure(figure(times.uuid))} | 1 |`,
    `| stats, 30 days daily, ${small.messages.toLocaleString('en')} messages | | ${read.small} |`,
    `| stats, 30 days daily, ${large.messages.toLocaleString('en')} messages | ${fmtFigure(figure(times.stats))} | ${read.large} |`,
    `| stats, 30 days daily, rows of ${turnover.shards} stream shards (AWS's turnover: 6 a day), first query | | ${turnover.first} |`,
    `| the same, next query (the first settled the rows their shards no longer write) | | ${turnover.next} |`,
    '',
    `DynamoDB Local keeps one or two stream shards for ever; on AWS each table partition's shard is replaced every few hours, and each shard counts into rows of its own. The last two lines seed what a month of that leaves for one account on a one-partition table (the last day's 6 shards written just now, the others more than 26 hours ago) and query it twice: the first query reads every row and settles the old ones, the next reads the settled rows and the last day's (counts ${turnover.sameCounts ? 'the same both times' : '**not the same**'}; docs/stats.md, "Settled rows").`,
    '',
    '| target | figure | verdict |',
    '|---|---|---|',
    `| stats query ≤ 1.2 × the query by uuid (per round) | ${fmtFigure(ratio, 2)} | ${checkTarget('stats-query', fmtFigure(ratio, 2), ratio.median <= 1.2)} |`,
    `| items read do not grow with the messages | ${read.small} at ${small.messages.toLocaleString('en')}, ${read.large} at ${large.messages.toLocaleString('en')} | ${checkTarget('stats-items', `${read.small} → ${read.large}`, read.large <= read.small)} |`,
    `| nor with the stream's shard turnover, once settled | ${turnover.next} after ${turnover.shards} shards | ${checkTarget('stats-turnover', String(turnover.next), turnover.sameCounts && turnover.next <= turnover.weeks + 6)} |`,
    '',
  ];
}
