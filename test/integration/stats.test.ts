import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DynamoDBRecord } from 'aws-lambda';
import { beforeAll, describe, it, vi } from 'vitest';
import { handler as deliveryEvents } from '../../functions/delivery-events/handler.ts';
import { handler as countBatch } from '../../functions/stats-counter/handler.ts';
import { formatDate, startOfZonedHour } from '../../shared/platform/time/format.ts';
import {
  bucketOf,
  counterAttribute,
  type DimensionKind,
  dayOfWeekAttribute,
  sequenceKey,
} from '../../shared/stats/model/counters.ts';
import { settleAfterMs } from '../../shared/stats/model/settling.ts';
import { queryStats } from '../../shared/stats/query.ts';
import { applyRowIncrement, queryCounterRows, type RowIncrement } from '../../shared/stats/store/stats.ts';
import {
  addMessage,
  putTestMessage,
  type SendingDomain,
  sendingDomain,
  waitForStatus,
} from '../support/delivery.ts';
import { call, mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';
import { receivingAccount, sendInbound, waitForInbound } from '../support/inbound.ts';
import { statsOf, streamRecordsOf, streamRecordsWhere, waitForTotals } from '../support/stats.ts';
import { undecodableMessageRecord } from '../support/stream-records.ts';
import { waitForSuppression } from '../support/suppressions.ts';
import { templateData } from '../support/templates.ts';

/*
 * POST /stats/query-1.0 after a known mix of messages: counters kept by the table stream's counting
 * consumer (the host runs it as Lambda's tumbling-window mapping would), exact, and still exact
 * when the consumer is made to do the same records again, whole or split differently.
 */
useHostEnvironment();

let sending: SendingDomain;
const uuids: string[] = [];
const day = 86_400_000;
const range = () => ({
  date_from: new Date(Date.now() - day).toISOString(),
  date_to: new Date(Date.now() + 3_600_000).toISOString(),
});
// accepted counts messages; the others count recipients (docs/stats.md).
const expected = {
  accepted: 7,
  sent: 5,
  delivered: 5,
  bounced: 2,
  complained: 1,
  suppressed: 1,
  failed: 0,
  unsubscribed: 0,
  opened: 0,
  clicked: 0,
  human_opened: 0,
};

/** A recorded SES event for one of this test's messages, happening now (counts go to the hour of the event). */
function sesEvent(name: string, uuid: string) {
  const text = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ses', name), 'utf8');
  const now = new Date().toISOString();
  const event = JSON.parse(text.replace(/"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z"/g, `"${now}"`));
  event.detail.mail.tags.message_uuid = [uuid];
  return event;
}

beforeAll(async () => {
  sending = await sendingDomain('rsa-sha256');
  const suppressed = `listed-${Date.now()}@stats.test`;
  const added = await call('POST', '/suppression/add-1.0', {
    token: sending.token,
    body: { emails: [suppressed] },
  });
  assert.equal(added.status, 200, added.text);
  await waitForSuppression(sending, suppressed);
  const send = async (to: string[], mode = 'immediate') =>
    (
      await addMessage(sending.token, {
        message_sender: `shop@${sending.domain}`,
        to,
        content: { kind: 'text_only', text: 'counted' },
        scheduling: { mode },
      })
    ).uuid;
  const sent = [
    await send(['a1@stats.test', 'a2@stats.test']), // 2 sent, 2 delivered
    await send(['a3@stats.test']), // 1 sent, 1 delivered
    await send(['bounce-1@stats.test']), // refused at RCPT: 1 bounced, not sent
    await send([suppressed]), // 1 suppressed, not sent
    await send(['a4@stats.test', 'bounce-2@stats.test']), // 1 sent, 1 delivered, 1 bounced
  ];
  const held = await send(['a5@stats.test'], 'manual-wait'); // accepted only
  for (const uuid of sent) await waitForStatus(sending.token, uuid, ['delivered', 'bounced', 'suppressed']);
  // Through SES (the events a configuration set publishes): 1 sent, 1 delivered, 1 complaint.
  const viaSes = await putTestMessage({
    account: sending.account,
    domain: sending.domain,
    to: ['recipient@example.com'],
    status: 'sent',
  });
  assert.deepEqual(await deliveryEvents(sesEvent('delivered.json', viaSes)), { result: 'recorded' });
  assert.deepEqual(await deliveryEvents(sesEvent('complaint.json', viaSes)), { result: 'recorded' });
  uuids.push(...sent, held, viaSes);
});

describe('POST /stats/query-1.0', () => {
  it('counts a known mix of delivered, bounced, suppressed and complained mail exactly', async () => {
    const data = await waitForTotals(sending.token, { ...range(), granularity: 'day' }, expected);
    assert.deepEqual(data.totals, { ...expected, bounce_rate: 2 / 5, complaint_rate: 1 / 5 });
    // One series, `all`, whose points add up to the totals.
    assert.deepEqual(
      data.series.map((series: { key: string }) => series.key),
      ['all'],
    );
    const summed = { ...expected };
    for (const name of Object.keys(summed) as Array<keyof typeof expected>)
      summed[name] = data.series[0].points.reduce(
        (sum: number, point: Record<string, number>) => sum + (point[name] ?? 0),
        0,
      );
    assert.deepEqual(summed, expected);
    for (const point of data.series[0].points) assert.match(point.at, /T00:00:00\.000[+-]\d{2}:\d{2}$/);

    // Hourly, and by sending domain: the same figures.
    const hourly = await statsOf(sending.token, { ...range(), granularity: 'hour', group_by: 'domain' });
    assert.deepEqual(hourly.totals, data.totals);
    assert.deepEqual(
      hourly.series.map((series: { key: string }) => series.key),
      [sending.domain],
    );
    assert.equal(hourly.series[0].points.length, 26);
    assert.equal(
      hourly.series[0].points.reduce((sum: number, point: { delivered: number }) => sum + point.delivered, 0),
      expected.delivered,
    );
  });

  it('counts a recipient SES rejected as failed (in its own account: the known mix has none)', async () => {
    // SES accepted the call (1 sent), then published a Reject: the pending recipient failed.
    const account = uniqueAccount('stats-failed');
    const uuid = await putTestMessage({
      account,
      domain: uniqueDomain('stats-failed'),
      to: ['recipient@example.com'],
      status: 'sent',
    });
    assert.deepEqual(await deliveryEvents(sesEvent('rejected.json', uuid)), { result: 'recorded' });
    const token = await mintToken({ account });
    const counted = {
      accepted: 1,
      sent: 1,
      delivered: 0,
      bounced: 0,
      complained: 0,
      suppressed: 0,
      failed: 1,
      unsubscribed: 0,
      opened: 0,
      clicked: 0,
      human_opened: 0,
    };
    const data = await waitForTotals(token, { ...range(), granularity: 'day' }, counted);
    assert.deepEqual(data.totals, { ...counted, bounce_rate: 0, complaint_rate: 0 });
    assert.equal(
      data.series[0].points.reduce((sum: number, point: { failed: number }) => sum + point.failed, 0),
      1,
    );
  });

  it('stays exact when the consumer does its batches again, whole or split another way', async () => {
    await waitForTotals(sending.token, { ...range(), granularity: 'day' }, expected);
    const byShard = await streamRecordsOf(uuids);
    assert.ok(byShard.size > 0, 'the stream has the records');
    for (const [shardId, records] of byShard) {
      // The whole batch again (a redelivery), then halves in another order, then one record at a time.
      const half = Math.ceil(records.length / 2);
      for (const batch of [
        records,
        records.slice(half),
        records.slice(0, half),
        ...records.map((r) => [r]),
      ]) {
        const answer = await countBatch({ Records: batch, shardId } as never);
        assert.deepEqual(answer, { batchItemFailures: [], state: {} });
      }
    }
    const again = await statsOf(sending.token, { ...range(), granularity: 'day' });
    assert.deepEqual(again.totals, { ...expected, bounce_rate: 2 / 5, complaint_rate: 1 / 5 });
  });

  it('a batch that overlaps what a row has counted adds only the records past its mark', async () => {
    // The stream hands a shard's records again from the first failed one, so a retried batch can
    // start inside what a row has counted: the row's condition then moves from "nothing of this
    // batch" to "exactly what it had", and only the records after its mark are added.
    const account = uniqueAccount('stats-overlap');
    const contributions = [1, 2, 3, 4, 5, 6].map((n) => ({
      sequence: sequenceKey(String(1000 + n)),
      attribute: counterAttribute(n % 2 === 0 ? 'delivered' : 'sent', 9),
      n: 1,
    }));
    const increment = (from: number, to: number): RowIncrement => ({
      account,
      kind: 'all',
      value: '',
      period: 'day',
      date: '2026-03-04',
      streamShard: 'shardId-overlap',
      contributions: contributions.slice(from, to),
    });
    const sequencesOf = (list: { sequence: string }[]) => list.map((item) => item.sequence);
    assert.deepEqual(
      sequencesOf(await applyRowIncrement(increment(0, 3))),
      sequencesOf(contributions.slice(0, 3)),
    );
    // Records 2 to 6 (2 and 3 already counted), handed over in another order.
    const overlapping = increment(1, 6);
    overlapping.contributions.reverse();
    assert.deepEqual(sequencesOf(await applyRowIncrement(overlapping)), sequencesOf(contributions.slice(3)));
    assert.deepEqual(await applyRowIncrement(increment(0, 6)), []);
    const { rows } = await queryCounterRows(account, 'all', 'day', '2026-03-04', '2026-03-04');
    assert.equal(rows.length, 1);
    const row = rows[0]?.attributes ?? {};
    assert.equal(row[counterAttribute('sent', 9)], 3);
    assert.equal(row[counterAttribute('delivered', 9)], 3);
    assert.equal(row.seq, contributions[5]?.sequence);
  });

  it('rows their stream shards no longer write are settled by a query: fewer rows next time, the same counts', async () => {
    // On AWS a stream's shards are replaced every few hours: here 6 shards counted one day of an
    // account and its domain, 5 of them more than a day ago, as the counting consumer would have.
    const account = uniqueAccount('stats-settle');
    const long = Date.now() - settleAfterMs - 60_000;
    let sequence = 0;
    const count = async (shard: string, writtenAt: number, delivered: number) => {
      const contributions = (attribute: string) =>
        Array.from({ length: delivered }, () => ({
          sequence: sequenceKey(String(++sequence)),
          attribute,
          n: 1,
        }));
      for (const [kind, value] of [
        ['all', ''],
        ['domain', 'settle.test'],
      ] as Array<[DimensionKind, string]>) {
        const base = { account, kind, value, streamShard: shard, writtenAt };
        await applyRowIncrement({
          ...base,
          period: 'day',
          date: '2026-03-04',
          contributions: contributions(counterAttribute('delivered', 9)),
        });
        await applyRowIncrement({
          ...base,
          // Wednesday 4 March 2026: the third day of the week of Monday the 2nd.
          period: 'week',
          date: '2026-03-02',
          contributions: contributions(dayOfWeekAttribute('delivered', 3)),
        });
      }
    };
    for (let shard = 1; shard <= 5; shard++) await count(`shardId-settle-${shard}`, long, shard);
    await count('shardId-settle-open', Date.now(), 10);
    const delivered = 1 + 2 + 3 + 4 + 5 + 10;
    const hourly = {
      date_from: '2026-03-04T00:00:00+00:00',
      date_to: '2026-03-04T23:00:00+00:00',
      granularity: 'hour',
    } as const;
    const daily = { ...hourly, granularity: 'day' } as const;
    for (const request of [hourly, daily])
      for (const group of [{}, { group_by: 'domain' as const }]) {
        const first = await queryStats(account, { ...request, ...group });
        assert.equal(first.totals.delivered, delivered);
        assert.equal(first.rowsRead, 6);
        // The 5 old rows became one settled row; the open shard's row stays its own.
        const next = await queryStats(account, { ...request, ...group });
        assert.deepEqual(next.totals, first.totals);
        assert.deepEqual(next.series, first.series);
        assert.equal(next.rowsRead, 2);
      }
    // A later record of a settled shard starts a new row of that shard, counted once.
    await count('shardId-settle-1', Date.now(), 1);
    const after = await queryStats(account, daily);
    assert.equal(after.totals.delivered, delivered + 1);
    assert.equal(after.rowsRead, 3);

    // Two queries settling the same rows at once move every count once.
    const racing = uniqueAccount('stats-settle-race');
    const rows = Array.from({ length: 4 }, (_, index) =>
      applyRowIncrement({
        account: racing,
        kind: 'all',
        value: '',
        period: 'week',
        date: '2026-03-02',
        streamShard: `shardId-race-${index}`,
        writtenAt: long,
        contributions: [{ sequence: sequenceKey('1'), attribute: dayOfWeekAttribute('sent', 3), n: 3 }],
      }),
    );
    await Promise.all(rows);
    await Promise.all([queryStats(racing, daily), queryStats(racing, daily), queryStats(racing, daily)]);
    const settled = await queryStats(racing, daily);
    assert.equal(settled.totals.sent, 12);
    assert.equal(settled.rowsRead, 1);
  });

  it('by tag, across a month boundary: one series per tag, each count on its day and hour', async () => {
    const tagged = (
      await addMessage(sending.token, {
        message_sender: `shop@${sending.domain}`,
        to: ['tagged@stats.test'],
        content: { kind: 'text_only', text: 'tagged' },
        tags: [
          { name: 'list', value: 'import-1' },
          { name: 'kind', value: 'news' },
        ],
        scheduling: { mode: 'manual-wait' },
      })
    ).uuid;
    const insert: DynamoDBRecord = await vi.waitFor(
      async () => {
        const found = [...(await streamRecordsOf([tagged])).values()]
          .flat()
          .find((r) => r.eventName === 'INSERT');
        assert.ok(found, 'the message reaches the stream');
        return found;
      },
      { timeout: 60_000, interval: 500 },
    );
    // The same message accepted by another account at three instants around a month's end.
    const account = uniqueAccount('stats-tags');
    const instants = ['2025-01-31T22:30:00.000Z', '2025-02-01T03:15:00.000Z', '2025-02-01T03:45:00.000Z'];
    const records = instants.map((createdAt, index) => {
      const record = structuredClone(insert) as DynamoDBRecord & {
        dynamodb: { NewImage: Record<string, unknown> };
      };
      record.dynamodb.SequenceNumber = String(index + 1);
      record.dynamodb.NewImage.account_id = { S: account };
      record.dynamodb.NewImage.created_at = { S: createdAt };
      return record;
    });
    const counted = await countBatch({ Records: records, shardId: `shardId-tags-${account}` } as never);
    assert.deepEqual(counted, { batchItemFailures: [], state: {} });

    const token = await mintToken({ account });
    const range = { date_from: '2025-01-20T00:00:00Z', date_to: '2025-02-10T00:00:00Z' };
    /** The points with a count, as `at` → accepted. */
    const countedPoints = (series: { points: Array<{ at: string; accepted: number }> }) =>
      Object.fromEntries(series.points.filter((point) => point.accepted > 0).map((p) => [p.at, p.accepted]));
    const expectedAt = (granularity: 'day' | 'hour', counted = instants) => {
      const points: Record<string, number> = {};
      for (const instant of counted) {
        const { date, hour } = bucketOf(instant);
        const at = formatDate(startOfZonedHour(date, granularity === 'day' ? 0 : hour));
        points[at] = (points[at] ?? 0) + 1;
      }
      return points;
    };
    for (const granularity of ['day', 'hour'] as const) {
      const byTag = await statsOf(token, { ...range, granularity, group_by: 'tag' });
      assert.deepEqual(
        byTag.series.map((series: { key: string }) => series.key),
        ['kind:news', 'list:import-1'],
      );
      for (const series of byTag.series) assert.deepEqual(countedPoints(series), expectedAt(granularity));
      // The totals are the account's, counted once however many tags a message has.
      assert.equal(byTag.totals.accepted, 3);
      const all = await statsOf(token, { ...range, granularity });
      assert.deepEqual(countedPoints(all.series[0]), expectedAt(granularity));
    }
    // The three instants share a week (Monday 27 January to Sunday 2 February): a daily range
    // that starts or ends inside it counts only the days of that week's row within the range.
    for (const [from, to] of [
      ['2025-02-01T00:00:00Z', '2025-02-10T00:00:00Z'],
      ['2025-01-20T00:00:00Z', '2025-01-31T23:00:00Z'],
    ] as const) {
      const [first, last] = [bucketOf(from).date, bucketOf(to).date];
      const inside = instants.filter(
        (instant) => bucketOf(instant).date >= first && bucketOf(instant).date <= last,
      );
      const daily = await statsOf(token, { date_from: from, date_to: to, granularity: 'day' });
      assert.equal(daily.totals.accepted, inside.length);
      assert.deepEqual(countedPoints(daily.series[0]), expectedAt('day', inside));
    }
  });

  it('a record that cannot be read is left out, not retried for ever (it would hold the shard back)', async () => {
    const uuid = '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e';
    const corrupt = undecodableMessageRecord(sending.account, uuid, 'INSERT', '1');
    const answer = await countBatch({ Records: [corrupt], shardId: 'shardId-corrupt-record' } as never);
    assert.deepEqual(answer, { batchItemFailures: [], state: {} });
  });

  it('items that are not messages (inbound mail, templates) count nothing', async () => {
    const who = await receivingAccount('stats-other');
    const sent = await sendInbound({
      from: 'Grace <grace@sender.test>',
      to: `support@${who.domain}`,
      subject: 'Not a message of ours',
      text: 'inbound',
    });
    assert.ok(sent.ok, sent.response);
    await waitForInbound(who, `support@${who.domain}`);
    await templateData(who, 'add', {
      alias: 'counted-not',
      name: 'Not counted',
      subject: 'Hi {{name}}',
      text: 'Hi',
    });
    await templateData(who, 'publish', { alias: 'counted-not' });
    const byShard = await streamRecordsWhere(
      (record) => record.dynamodb?.NewImage?.account_id?.S === who.account,
    );
    const keys = [...byShard.values()].flat().map((record) => String(record.dynamodb?.Keys?.pk?.S));
    assert.ok(
      keys.some((pk) => pk.startsWith('INBOUND#')),
      `inbound item in the stream: ${keys.join(', ')}`,
    );
    assert.ok(
      keys.some((pk) => pk.startsWith('TEMPLATE#')),
      `template version in the stream: ${keys.join(', ')}`,
    );
    for (const [shardId, records] of byShard) {
      const answer = await countBatch({ Records: records, shardId: `${shardId}-again` } as never);
      assert.deepEqual(answer, { batchItemFailures: [], state: {} });
    }
    const data = await statsOf(who.token, { ...range(), granularity: 'day', group_by: 'domain' });
    assert.deepEqual(data.series, []);
    assert.equal(data.totals.accepted, 0);
  });

  it('reads counter rows only: a few per day, however many messages', async () => {
    // At most 2 weeks × the stream shards that counted (DynamoDB Local: one or two), for the account
    // and for its one domain: no message is read.
    for (const group_by of [undefined, 'domain'] as const) {
      const answer = await queryStats(sending.account, {
        ...range(),
        granularity: 'day',
        ...(group_by ? { group_by } : {}),
      });
      assert.ok(answer.rowsRead > 0 && answer.rowsRead <= 2 * 2, `read ${answer.rowsRead} rows`);
    }
  });

  it('another account sees none of it; bad ranges are 107', async () => {
    const stranger = await mintToken({ account: uniqueAccount('stats') });
    const data = await statsOf(stranger, { ...range(), granularity: 'day' });
    assert.equal(data.totals.accepted, 0);
    assert.equal(data.totals.bounce_rate, 0);
    for (const body of [
      { date_from: range().date_to, date_to: range().date_from, granularity: 'day' },
      { date_from: '2026-01-01T00:00:00Z', date_to: '2026-03-01T00:00:00Z', granularity: 'hour' },
      { ...range(), granularity: 'week' },
      { ...range(), granularity: 'day', group_by: 'account' },
      { ...range(), granularity: 'day', tenant: 'x' },
    ]) {
      const response = await call('POST', '/stats/query-1.0', { token: sending.token, body });
      assert.equal(response.status, 406, JSON.stringify(body));
      assert.equal(response.body.error.code, 107);
    }
  });
});
