import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { messageStatuses } from '../../shared/messages/model/statuses.ts';
import { listMessages } from '../../shared/messages/query.ts';
import { laneOf } from '../../shared/messages/store/message-index.ts';
import { chunkSize } from '../../shared/platform/paging/merge.ts';
import { shardCount } from '../../shared/platform/table/keys.ts';
import { call, mintToken } from '../support/host.ts';
import {
  add,
  created,
  forceStatus,
  isoWithOffset,
  mapLimit,
  newAccount,
  pageThrough,
  query,
  type TestAccount,
} from '../support/messages.ts';

const inHours = (hours: number) =>
  new Date(Date.now() + hours * 3600 * 1000).toISOString().replace('Z', '+00:00');

/** Creates `count` held messages (manual-wait or scheduled: the sender never takes them). */
async function many(who: TestAccount, count: number, mode: 'manual-wait' | 'scheduled'): Promise<string[]> {
  const scheduling = mode === 'scheduled' ? { mode, send_at: inHours(24) } : { mode };
  return mapLimit(Array.from({ length: count }), 6, () => created(who, { scheduling }));
}

describe('POST /message/query-1.0', () => {
  it('returns one message in full by uuid, every date with an offset', async () => {
    const who = await newAccount();
    const uuid = await created(who, {
      from: [{ email: who.sender, name: 'Shop' }],
      cc: ['cc@recipient.test'],
      bcc: ['bcc@recipient.test'],
      reply_to: ['help@recipient.test'],
      scheduling: { mode: 'manual-wait' },
    });
    const response = await query(who, { message_uuid: uuid.toUpperCase() });
    assert.equal(response.status, 200, response.text);
    const data = response.body.data;
    assert.equal(data.message_uuid, uuid);
    assert.equal(data.status, 'waiting');
    assert.equal(data.message_sender, who.sender);
    assert.deepEqual(data.from, [{ email: who.sender, name: 'Shop' }]);
    assert.deepEqual(data.reply_to, [{ email: 'help@recipient.test' }]);
    assert.deepEqual(
      data.recipients.map((r: any) => [r.kind, r.email, r.status]),
      [
        ['to', 'ada@recipient.test', 'pending'],
        ['cc', 'cc@recipient.test', 'pending'],
        ['bcc', 'bcc@recipient.test', 'pending'],
      ],
    );
    assert.equal(data.subject, 'Hello');
    assert.equal(data.content_kind, 'text_only');
    assert.deepEqual(data.scheduling, { mode: 'manual-wait' });
    assert.deepEqual(
      data.status_history.map((entry: any) => entry.status),
      ['waiting'],
    );
    for (const date of [
      data.created_at,
      data.updated_at,
      data.status_history[0].at,
      data.recipients[0].updated_at,
    ]) {
      assert.match(date, isoWithOffset);
    }
  });

  it('answers an unknown or foreign uuid with 112 and a malformed one with 107', async () => {
    const who = await newAccount();
    const other = await newAccount();
    const foreign = await created(other, { scheduling: { mode: 'manual-wait' } });
    for (const uuid of [foreign, '3f1e2d3c-4b5a-4697-8887-766554433221']) {
      const response = await query(who, { message_uuid: uuid });
      assert.equal(response.status, 404);
      assert.equal(response.body.error.code, 112);
      assert.ok(!response.text.includes(other.account));
    }
    assert.equal((await query(who, { message_uuid: 'nope' })).body.error.code, 107);
    assert.equal((await query(who, { message_uuid: foreign, filters: {} })).body.error.code, 107);
  });

  it('needs messages:read', async () => {
    const who = await newAccount();
    const token = await mintToken({ account: who.account, scopes: ['messages:send'] });
    const response = await call('POST', '/message/query-1.0', { token, body: { filters: {} } });
    assert.equal(response.body.error.code, 113);
  });

  it('filters by status and date, newest first, with the matching count (rule 6)', async () => {
    const who = await newAccount();
    const before = new Date(Date.now() - 1000).toISOString().replace('Z', '+00:00');
    const waiting = await many(who, 3, 'manual-wait');
    const scheduled = await many(who, 2, 'scheduled');
    const cancelled = await created(who, { scheduling: { mode: 'manual-wait' } });
    await add(who, { scheduling: { mode: 'manual-cancel', message_uuid: cancelled } });

    const byWaiting = await query(who, { filters: { status: 'waiting' } });
    assert.equal(byWaiting.body.data.count, 3);
    assert.deepEqual(
      byWaiting.body.data.messages.map((m: any) => m.message_uuid).sort(),
      [...waiting].sort(),
    );
    assert.equal(byWaiting.body.data.next_cursor, null);

    const byTwo = await query(who, { filters: { status: ['scheduled', 'cancelled'] } });
    assert.equal(byTwo.body.data.count, 3);
    assert.deepEqual(
      byTwo.body.data.messages.map((m: any) => m.message_uuid).sort(),
      [...scheduled, cancelled].sort(),
    );

    const all = await query(who, { filters: {} });
    assert.equal(all.body.data.count, 6);
    const created_at = all.body.data.messages.map((m: any) => Date.parse(m.created_at));
    assert.deepEqual(
      created_at,
      [...created_at].sort((a, b) => b - a),
    );
    for (const message of all.body.data.messages) {
      assert.match(message.created_at, isoWithOffset);
      assert.deepEqual(Object.keys(message).sort(), [
        'content_kind',
        'created_at',
        'message_sender',
        'message_uuid',
        'recipients',
        'recipients_count',
        'scheduling',
        'status',
        'stream',
        'subject',
        'updated_at',
      ]);
    }

    const inWindow = await query(who, { filters: { date_from: before, date_to: inHours(1) } });
    assert.equal(inWindow.body.data.count, 6);
    const future = await query(who, { filters: { date_from: inHours(1) } });
    assert.equal(future.body.data.count, 0);
    const past = await query(who, { filters: { date_to: before } });
    assert.equal(past.body.data.count, 0);
  });

  it('refuses bad filters and cursors with 107', async () => {
    const who = await newAccount();
    const other = await newAccount();
    const bad: unknown[] = [
      { filters: { limit: 0 } },
      { filters: { limit: 1001 } },
      { filters: { limit: 2.5 } },
      { filters: { status: 'lost' } },
      { filters: { status: [] } },
      { filters: { date_from: '2026-01-01' } },
      { filters: { date_from: '2026-02-01T00:00:00+00:00', date_to: '2026-01-01T00:00:00+00:00' } },
      { filters: {}, cursor: 'garbage!' },
      { filters: {}, cursor: Buffer.from('{"v":1}').toString('base64url') },
    ];
    for (const body of bad) {
      const response = await query(who, body);
      assert.equal(response.status, 406, JSON.stringify(body));
      assert.equal(response.body.error.code, 107, JSON.stringify(body));
    }
    // a cursor is bound to its account and its filters
    await many(other, 3, 'manual-wait');
    const page = await query(other, { filters: { limit: 1 } });
    const cursor = page.body.data.next_cursor;
    assert.ok(cursor);
    const stolen = await query(who, { filters: { limit: 1 }, cursor });
    assert.equal(stolen.body.error.code, 107);
    assert.ok(!stolen.text.includes('message_uuid'));
    const otherFilters = await query(other, { filters: { status: 'queued', limit: 1 }, cursor });
    assert.equal(otherFilters.body.error.code, 107);
  });

  it('pages through every message exactly once, newest first, with one or several statuses', async () => {
    const who = await newAccount();
    const waiting = await many(who, 11, 'manual-wait');
    const scheduled = await many(who, 7, 'scheduled');
    const cancelled = await many(who, 4, 'manual-wait');
    await mapLimit(cancelled, 4, (uuid) =>
      add(who, { scheduling: { mode: 'manual-cancel', message_uuid: uuid } }),
    );

    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ limit: 4 }, [...waiting, ...scheduled, ...cancelled]],
      [{ limit: 3, status: 'waiting' }, waiting],
      [{ limit: 4, status: ['waiting', 'scheduled'] }, [...waiting, ...scheduled]],
      [
        { limit: 5, status: ['cancelled', 'scheduled', 'waiting', 'queued'] },
        [...waiting, ...scheduled, ...cancelled],
      ],
      [{ limit: 1000, status: ['waiting', 'cancelled'] }, [...waiting, ...cancelled]],
    ];
    for (const [filters, expected] of cases) {
      const pages = await pageThrough(who, filters);
      const seen = pages.flatMap((page) => page.messages);
      const ids = seen.map((message: any) => message.message_uuid);
      assert.equal(new Set(ids).size, ids.length, `duplicates with ${JSON.stringify(filters)}`);
      assert.deepEqual([...ids].sort(), [...expected].sort(), `gaps with ${JSON.stringify(filters)}`);
      for (const page of pages) {
        assert.equal(page.count, page.messages.length);
        assert.ok(page.count <= (filters.limit as number));
      }
      const order = seen.map((message: any) => Date.parse(message.created_at));
      assert.deepEqual(
        order,
        [...order].sort((a, b) => b - a),
        `order with ${JSON.stringify(filters)}`,
      );
    }
  });

  it('keeps paging consistent while messages change status between pages', async () => {
    const who = await newAccount();
    const waiting = await many(who, 6, 'manual-wait');
    const first = await query(who, { filters: { status: 'waiting', limit: 3 } });
    const firstIds = first.body.data.messages.map((m: any) => m.message_uuid);
    // one returned message leaves the status; the cursor still continues after it
    await add(who, { scheduling: { mode: 'manual-cancel', message_uuid: firstIds[2] } });
    const second = await query(who, {
      filters: { status: 'waiting', limit: 3 },
      cursor: first.body.data.next_cursor,
    });
    const secondIds = second.body.data.messages.map((m: any) => m.message_uuid);
    assert.deepEqual([...firstIds, ...secondIds].sort(), [...waiting].sort());
  });

  it('pages the unfiltered list exactly once while messages change status between pages', async () => {
    const who = await newAccount();
    const waiting = await many(who, 6, 'manual-wait');
    // newest first: waiting[5] … waiting[0] by creation; a page of 3 ends inside the waiting ones
    const first = await query(who, { filters: { limit: 3 } });
    assert.equal(first.status, 200, first.text);
    const firstIds = first.body.data.messages.map((m: any) => m.message_uuid);
    // An older message not shown yet moves into a status whose streams had nothing (sent), and one
    // already shown moves too (cancelled): neither is shown twice, and none is skipped.
    const older = waiting.filter((uuid) => !firstIds.includes(uuid));
    await forceStatus(older[0] as string, 'sent');
    await add(who, { scheduling: { mode: 'manual-cancel', message_uuid: firstIds[0] } });
    const rest: string[] = [];
    for (let cursor = first.body.data.next_cursor; cursor !== null; ) {
      const next = await query(who, { filters: { limit: 3 }, cursor });
      assert.equal(next.status, 200, next.text);
      rest.push(...next.body.data.messages.map((m: any) => m.message_uuid));
      cursor = next.body.data.next_cursor;
      assert.ok(rest.length <= waiting.length, 'paging does not end');
    }
    assert.deepEqual([...firstIds, ...rest].sort(), [...waiting].sort());
  });

  it('lists by lane: a status of the accepted lane is filtered from it, the whole lane and the unfiltered list are complete and ordered', async () => {
    const who = await newAccount();
    // Created one after another (oldest first), then moved: the accepted lane holds queued,
    // processing, sent and delivered messages; bounced, failed and waiting are lanes of their own.
    const uuids: string[] = [];
    for (let index = 0; index < 9; index++) uuids.push(...(await many(who, 1, 'manual-wait')));
    const statuses = [
      'queued',
      'delivered',
      'processing',
      'bounced',
      'delivered',
      'sent',
      'failed',
      'delivered',
      'waiting',
    ];
    await mapLimit(uuids, 3, async (uuid, index) => {
      const status = statuses[index] as string;
      if (status !== 'waiting') assert.ok(await forceStatus(uuid, status, 'waiting'));
    });
    const newestFirst = (list: string[]) => [...list].reverse();
    const withStatus = (...wanted: string[]) =>
      newestFirst(uuids.filter((_, index) => wanted.includes(statuses[index] as string)));
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ limit: 2 }, newestFirst(uuids)],
      [{ limit: 2, status: 'delivered' }, withStatus('delivered')],
      [{ limit: 1, status: 'sent' }, withStatus('sent')],
      [{ limit: 2, status: ['queued', 'processing'] }, withStatus('queued', 'processing')],
      [
        { limit: 3, status: ['queued', 'processing', 'sent', 'delivered'] },
        withStatus('queued', 'processing', 'sent', 'delivered'),
      ],
      [
        { limit: 2, status: ['delivered', 'bounced', 'failed'] },
        withStatus('delivered', 'bounced', 'failed'),
      ],
    ];
    for (const [filters, expected] of cases) {
      const seen = (await pageThrough(who, filters)).flatMap((page) => page.messages);
      assert.deepEqual(
        seen.map((message: any) => message.message_uuid),
        expected,
        JSON.stringify(filters),
      );
      for (const message of seen)
        if (filters.status !== undefined) assert.ok([filters.status].flat().includes(message.status));
    }
    // The whole accepted lane reads its entries without their items (no status to drop).
    const lane = await listMessages(
      who.account,
      { status: ['queued', 'processing', 'sent', 'delivered'] },
      undefined,
    );
    assert.equal(lane.budgetReached, false);
    assert.ok(lane.scannedCount <= lane.count + shardCount.account * chunkSize(100, shardCount.account));
  });

  it('pages a lane exactly once while its messages change status between pages, out of the lane and into another', async () => {
    const who = await newAccount();
    const uuids: string[] = [];
    for (let index = 0; index < 6; index++) uuids.push(...(await many(who, 1, 'manual-wait')));
    await mapLimit(uuids, 3, (uuid) => forceStatus(uuid, 'delivered', 'waiting'));
    // newest first: uuids[5] … uuids[0]
    for (const filters of [{ limit: 2 }, { limit: 2, status: ['delivered', 'bounced'] }]) {
      const first = await query(who, { filters });
      assert.equal(first.status, 200, first.text);
      const firstIds = first.body.data.messages.map((m: any) => m.message_uuid);
      assert.deepEqual(firstIds, [uuids[5], uuids[4]]);
      // One shown moves out of the accepted lane (delivered → bounced); one not shown yet does too,
      // into a lane whose stream is continued from the same boundary: neither repeated nor skipped.
      await forceStatus(uuids[5] as string, 'bounced');
      await forceStatus(uuids[2] as string, 'bounced');
      const rest: string[] = [];
      for (let cursor = first.body.data.next_cursor; cursor !== null; ) {
        const next = await query(who, { filters, cursor });
        assert.equal(next.status, 200, next.text);
        rest.push(...next.body.data.messages.map((m: any) => m.message_uuid));
        cursor = next.body.data.next_cursor;
        assert.ok(rest.length <= uuids.length, 'paging does not end');
      }
      assert.deepEqual([...firstIds, ...rest], [...uuids].reverse(), JSON.stringify(filters));
      await forceStatus(uuids[5] as string, 'delivered');
      await forceStatus(uuids[2] as string, 'delivered');
    }
  });

  it('filters a lane of several statuses by the items as they are now: a delivered message is not in flight', async () => {
    const who = await newAccount();
    const [uuid] = await many(who, 1, 'manual-wait');
    // The accepted lane holds queued, processing, sent and delivered messages alike: a filter on
    // some of them reads the lane's items and keeps those in the asked statuses as they are now.
    assert.ok(await forceStatus(uuid as string, 'delivered', undefined, { indexedAs: 'processing' }));
    const list = await query(who, { filters: {} });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.data.messages.map((m: any) => [m.message_uuid, m.status]),
      [[uuid, 'delivered']],
    );
    const inFlight = await query(who, { filters: { status: ['queued', 'processing'] } });
    assert.equal(inFlight.body.data.count, 0);
  });

  it('does not scan: DynamoDB evaluates the page and a bounded read-ahead, however much the table holds', async () => {
    const who = await newAccount();
    const noise = await newAccount();
    await many(who, 12, 'manual-wait');
    await many(who, 5, 'scheduled');
    // Each status is spread over the account's shards, read as one exact merge: DynamoDB evaluates
    // the page plus at most one first-round chunk per shard stream (docs/data-model.md, "Queries").
    const bound = (count: number, limit: number, statuses: number) => {
      const streams = statuses * shardCount.account;
      return count + streams * chunkSize(limit, streams);
    };
    // Without a status filter every listing lane is merged: one stream per lane and shard (queued,
    // processing, sent and delivered share the accepted lane).
    const everyStatus = new Set(messageStatuses.map(laneOf)).size;
    const cases = [
      { limit: 7 },
      { limit: 7, status: 'waiting' as const },
      { limit: 4, status: 'scheduled' as const, date_from: inHours(-1), date_to: inHours(1) },
    ];
    const measure = async () => {
      const results = [];
      for (const filters of cases) {
        const page = await listMessages(who.account, filters, undefined);
        results.push({ count: page.count, scanned: page.scannedCount, limit: filters.limit, filters });
        // continue with the cursor too
        if (page.next_cursor !== null) {
          const next = await listMessages(who.account, filters, page.next_cursor);
          results.push({ count: next.count, scanned: next.scannedCount, limit: filters.limit, filters });
        }
      }
      return results;
    };
    const small = await measure();
    await many(noise, 25, 'manual-wait');
    await many(who, 3, 'scheduled');
    await forceStatus((await many(who, 1, 'manual-wait'))[0] as string, 'sent');
    // now: 21 messages (12 waiting, 8 scheduled, 1 sent) among 46 in the table's indexes
    const large = await measure();
    for (const { count, scanned, limit, filters } of [...small, ...large]) {
      assert.ok(scanned >= count, `evaluated ${scanned} for ${count}`);
      const statuses = filters.status === undefined ? everyStatus : 1;
      assert.ok(scanned <= bound(count, limit, statuses), `evaluated ${scanned} for a page of ${count}`);
    }
    // several statuses: one stream per status and shard, again bounded by the page, not the table
    const mixed = await listMessages(who.account, { limit: 5, status: ['waiting', 'scheduled'] }, undefined);
    assert.equal(mixed.count, 5);
    assert.ok(mixed.scannedCount <= bound(5, 5, 2), `evaluated ${mixed.scannedCount}`);
    assert.deepEqual(
      small.map((entry) => entry.count),
      [7, 7, 7, 5, 4, 1],
    );
    assert.deepEqual(
      large.map((entry) => entry.count),
      [7, 7, 7, 5, 4, 4],
    );
  });
});
