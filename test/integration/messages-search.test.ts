import assert from 'node:assert/strict';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, it } from 'vitest';
import { listMessages } from '../../shared/messages/query.ts';
import { searchEntriesOf } from '../../shared/messages/store/message-index.ts';
import { dynamo } from '../../shared/platform/aws/dynamo.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { chunkSize } from '../../shared/platform/paging/merge.ts';
import { accountShardOf, shardCount } from '../../shared/platform/table/keys.ts';
import { useHostEnvironment } from '../support/host.ts';
import {
  add,
  created,
  forceStatus,
  mapLimit,
  newAccount,
  pageThrough,
  query,
  rawItem,
  remove,
  type TestAccount,
} from '../support/messages.ts';

/**
 * The search filters (docs/messages.md, "Finding messages"): `tag`, `metadata` (one pair) and
 * `recipient` (exact, case-insensitive), alone and with `status` and the date range, served by the
 * messages' search entries (one per term, over the account's shards), merged exactly like the
 * status streams: newest first, every message once across pages, work bounded by the page.
 */
const reset = { name: 'flow', value: 'password-reset' };
const receipt = { name: 'category', value: 'receipt' };
const held = { scheduling: { mode: 'manual-wait' } };

const idsOf = (pages: any[]): string[] =>
  pages.flatMap((page) => page.messages.map((message: any) => message.message_uuid as string));

async function uuidsOf(who: TestAccount, filters: Record<string, unknown>): Promise<string[]> {
  return idsOf(await pageThrough(who, filters)).sort();
}

const sorted = (list: readonly string[]) => [...list].sort();

describe('search filters', () => {
  it('recipient: any of to, cc and bcc, exact but case-insensitive', async () => {
    const who = await newAccount('search');
    const toJoe = await created(who, { to: ['Joe <Joe.Doe@Recipient.test>'], ...held });
    const ccJoe = await created(who, { to: ['ada@recipient.test'], cc: ['joe.doe@recipient.test'], ...held });
    const bccJoe = await created(who, {
      to: ['ada@recipient.test'],
      bcc: ['JOE.DOE@recipient.test'],
      ...held,
    });
    const notJoe = await created(who, { to: ['joe.doe@recipient.tes', 'xjoe.doe@recipient.test'], ...held });
    // Named twice in one message: one entry, one result.
    const twice = await created(who, {
      to: ['joe.doe@recipient.test'],
      cc: ['Joe.Doe@recipient.test'],
      ...held,
    });
    const expected = sorted([toJoe, ccJoe, bccJoe, twice]);
    for (const spelling of [
      'joe.doe@recipient.test',
      'JOE.DOE@RECIPIENT.TEST',
      'Joe <joe.doe@recipient.test>',
    ])
      assert.deepEqual(await uuidsOf(who, { recipient: spelling }), expected, spelling);
    assert.deepEqual(await uuidsOf(who, { recipient: 'ada@recipient.test' }), sorted([ccJoe, bccJoe]));
    assert.deepEqual(await uuidsOf(who, { recipient: 'nobody@recipient.test' }), []);
    assert.ok(!(await uuidsOf(who, { recipient: 'joe.doe@recipient.test' })).includes(notJoe));
    const bad = await query(who, { filters: { recipient: 'not an address' } });
    assert.equal(bad.body.error.code, 10000001);
  });

  it('tag and metadata: exact pairs; one metadata pair at a time', async () => {
    const who = await newAccount('search');
    const a = await created(who, { tags: [reset], metadata: { user_id: 'u-1', flow: 'x' }, ...held });
    const b = await created(who, { tags: [receipt, reset], metadata: { user_id: 'u-2' }, ...held });
    const c = await created(who, { tags: [receipt], metadata: { user_id: 'u-1' }, ...held });
    await created(who, { tags: [{ name: 'flow', value: 'Password-Reset' }], ...held });
    assert.deepEqual(await uuidsOf(who, { tag: reset }), sorted([a, b]));
    assert.deepEqual(await uuidsOf(who, { tag: receipt }), sorted([b, c]));
    assert.deepEqual(await uuidsOf(who, { tag: { name: 'flow', value: 'password' } }), []);
    assert.deepEqual(await uuidsOf(who, { tag: { name: 'category', value: 'password-reset' } }), []);
    assert.deepEqual(await uuidsOf(who, { metadata: { user_id: 'u-1' } }), sorted([a, c]));
    assert.deepEqual(await uuidsOf(who, { metadata: { user_id: 'u-1 ' } }), []);
    assert.deepEqual(await uuidsOf(who, { metadata: { flow: 'x' } }), [a]);
    // Several search filters at once: all of them hold.
    assert.deepEqual(await uuidsOf(who, { tag: receipt, metadata: { user_id: 'u-1' } }), [c]);
    assert.deepEqual(
      await uuidsOf(who, { tag: reset, metadata: { user_id: 'u-2' }, recipient: 'ada@recipient.test' }),
      [b],
    );
    for (const filters of [
      { metadata: { a: '1', b: '2' } },
      { metadata: {} },
      { tag: { name: 'x y', value: 'v' } },
    ]) {
      const response = await query(who, { filters });
      assert.equal(response.body.error.code, 107, JSON.stringify(filters));
    }
  });

  it('each filter combines with status (as the messages are now) and with the date range', async () => {
    const who = await newAccount('search');
    const before = new Date(Date.now() - 1000).toISOString().replace('Z', '+00:00');
    // The same six messages are found by a tag, a recipient (to or cc) and a metadata pair.
    const labelled = { tags: [reset], metadata: { flow: 'pw' }, to: ['pat@recipient.test'], ...held };
    const waiting = await mapLimit(Array.from({ length: 3 }), 3, () => created(who, labelled));
    const cancelled = await created(who, {
      ...labelled,
      to: ['ada@recipient.test'],
      cc: ['Pat@Recipient.test'],
    });
    await add(who, { scheduling: { mode: 'manual-cancel', message_uuid: cancelled } });
    const bounced = await created(who, labelled);
    assert.ok(await forceStatus(bounced, 'bounced'));
    const inFlight = await created(who, labelled);
    assert.ok(await forceStatus(inFlight, 'queued'));
    await created(who, { tags: [receipt], metadata: { flow: 'other' }, to: ['kim@recipient.test'], ...held });

    const after = new Date(Date.now() + 1000).toISOString().replace('Z', '+00:00');
    for (const search of [
      { tag: reset },
      { recipient: 'PAT@recipient.test' },
      { metadata: { flow: 'pw' } },
    ]) {
      const named = JSON.stringify(search);
      assert.deepEqual(await uuidsOf(who, { ...search, status: 'waiting' }), sorted(waiting), named);
      assert.deepEqual(
        await uuidsOf(who, { ...search, status: ['cancelled', 'bounced'] }),
        sorted([cancelled, bounced]),
        named,
      );
      assert.deepEqual(await uuidsOf(who, { ...search, status: 'queued' }), [inFlight], named);
      assert.deepEqual(await uuidsOf(who, { ...search, status: 'delivered' }), [], named);
      assert.equal((await uuidsOf(who, { ...search, date_from: before, date_to: after })).length, 6, named);
      assert.deepEqual(await uuidsOf(who, { ...search, date_from: after }), [], named);
      assert.deepEqual(await uuidsOf(who, { ...search, date_to: before }), [], named);
      // A window that holds only the later messages (bounds are inclusive), with and without a status.
      const all = (await query(who, { filters: search })).body.data.messages;
      assert.equal(all.length, 6, named);
      const cutoff = all[2].created_at as string;
      assert.deepEqual(
        await uuidsOf(who, { ...search, date_from: cutoff }),
        sorted(
          all
            .filter((m: any) => Date.parse(m.created_at) >= Date.parse(cutoff))
            .map((m: any) => m.message_uuid),
        ),
        named,
      );
      assert.deepEqual(
        await uuidsOf(who, { ...search, status: 'waiting', date_to: cutoff }),
        sorted(
          all
            .filter((m: any) => m.status === 'waiting' && Date.parse(m.created_at) <= Date.parse(cutoff))
            .map((m: any) => m.message_uuid),
        ),
        named,
      );
    }
  });

  it('pages across the shards: every message once, newest first, also while statuses change', async () => {
    const who = await newAccount('search');
    const tagged = await mapLimit(Array.from({ length: 26 }), 6, () =>
      created(who, { tags: [reset], metadata: { batch: 'b1' }, to: ['pat@recipient.test'], ...held }),
    );
    await mapLimit(Array.from({ length: 6 }), 6, () => created(who, { tags: [receipt], ...held }));
    assert.equal(
      new Set(tagged.map(accountShardOf)).size,
      shardCount.account,
      'the messages use every shard',
    );
    for (const [filters, limit] of [
      [{ tag: reset }, 4],
      [{ metadata: { batch: 'b1' } }, 7],
      [{ recipient: 'pat@recipient.test' }, 5],
      [{ tag: reset, status: ['waiting', 'cancelled'] }, 3],
    ] as const) {
      const pages = await pageThrough(who, { ...filters, limit });
      const ids = idsOf(pages);
      assert.equal(new Set(ids).size, ids.length, `duplicates with ${JSON.stringify(filters)}`);
      assert.deepEqual(sorted(ids), sorted(tagged), `gaps with ${JSON.stringify(filters)}`);
      const order = pages.flatMap((page) => page.messages.map((m: any) => Date.parse(m.created_at)));
      assert.deepEqual(
        order,
        [...order].sort((x, y) => y - x),
      );
      for (const page of pages) assert.ok(page.count <= limit && page.count === page.messages.length);
    }
    // Statuses change between pages: the cursor still shows each message once.
    const first = await query(who, { filters: { tag: reset, status: 'waiting', limit: 5 } });
    const firstIds = first.body.data.messages.map((m: any) => m.message_uuid);
    await add(who, { scheduling: { mode: 'manual-cancel', message_uuid: firstIds[4] } });
    const notShown = tagged.filter((uuid) => !firstIds.includes(uuid));
    await add(who, { scheduling: { mode: 'manual-cancel', message_uuid: notShown[0] } });
    const rest: string[] = [];
    for (let cursor = first.body.data.next_cursor; cursor !== null; ) {
      const next = await query(who, { filters: { tag: reset, status: 'waiting', limit: 5 }, cursor });
      assert.equal(next.status, 200, next.text);
      rest.push(...next.body.data.messages.map((m: any) => m.message_uuid));
      cursor = next.body.data.next_cursor;
    }
    assert.deepEqual(sorted([...firstIds, ...rest]), sorted(tagged.filter((uuid) => uuid !== notShown[0])));
    // A cursor belongs to its filters.
    const other = await query(who, {
      filters: { tag: receipt, limit: 5 },
      cursor: first.body.data.next_cursor,
    });
    assert.equal(other.body.error.code, 107);
  });

  it('is an index query: the work stays bounded by the page, whatever else the table holds', async () => {
    const who = await newAccount('search');
    const noise = await newAccount('search');
    await mapLimit(Array.from({ length: 14 }), 6, () => created(who, { tags: [reset], ...held }));
    const streams = shardCount.account;
    const bound = (count: number, limit: number) => count + streams * chunkSize(limit, streams);
    const cases = [
      { limit: 5, tag: reset },
      { limit: 3, tag: reset, status: 'waiting' as const },
    ];
    const measure = async () => {
      const results: Array<{ count: number; scanned: number; limit: number }> = [];
      for (const filters of cases) {
        let cursor: string | undefined;
        for (let page = 0; page < 3; page++) {
          const result = await listMessages(who.account, filters, cursor);
          results.push({ count: result.count, scanned: result.scannedCount, limit: filters.limit });
          if (result.next_cursor === null) break;
          cursor = result.next_cursor;
        }
      }
      return results;
    };
    const small = await measure();
    // The same tag on another account, other tags and statuses in this one: none of it is read.
    await mapLimit(Array.from({ length: 30 }), 6, () => created(noise, { tags: [reset], ...held }));
    await mapLimit(Array.from({ length: 20 }), 6, () => created(who, { tags: [receipt], ...held }));
    const large = await measure();
    assert.deepEqual(
      large.map((entry) => entry.count),
      small.map((entry) => entry.count),
    );
    for (const { count, scanned, limit } of [...small, ...large]) {
      assert.ok(scanned >= count, `evaluated ${scanned} for ${count}`);
      assert.ok(scanned <= bound(count, limit), `evaluated ${scanned} for a page of ${count}`);
    }
    assert.deepEqual(
      large.map((entry) => entry.scanned),
      small.map((entry) => entry.scanned),
      'the same work at both sizes',
    );
    const isolated = await query(noise, { filters: { tag: reset } });
    assert.equal(isolated.body.data.count, 30, 'each account sees its own');
  });

  it('a deleted message takes its search entries with it', async () => {
    useHostEnvironment();
    const who = await newAccount('search');
    const uuid = await created(who, {
      tags: [reset],
      metadata: { k: 'v' },
      cc: ['c@recipient.test'],
      ...held,
    });
    const item = await rawItem(uuid);
    const entries = searchEntriesOf(item as never);
    assert.equal(entries.length, 4, 'two recipients, one tag, one metadata pair');
    const read = (key: { pk: string; sk: string }) =>
      dynamo().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    // The entries' keys (a digest of the term, never the address) are pinned in
    // test/unit/search-terms.test.ts; here they are stored, and deleted with the message.
    for (const entry of entries) assert.ok((await read(entry)).Item !== undefined);
    const deleted = await remove(who, [uuid]);
    assert.deepEqual(deleted.body.data.deleted, [uuid]);
    for (const entry of entries) assert.equal((await read(entry)).Item, undefined);
    assert.deepEqual(await uuidsOf(who, { tag: reset }), []);
  });

  it('subject: contains, case-insensitive, alone and with the other filters, and pages to the end', async () => {
    const who = await newAccount('search');
    const invoice = await created(who, { subject: 'Your invoice #12', tags: [receipt], ...held });
    const shouting = await created(who, { subject: 'INVOICE ready', ...held });
    const umlaut = await created(who, { subject: 'Ärger im Büro', ...held });
    // Enough others that some pages, read through the work budget, come back short.
    await mapLimit(Array.from({ length: 12 }), 6, () => created(who, { subject: 'Welcome aboard', ...held }));
    const scheduled = await created(who, {
      subject: 'Invoice later',
      scheduling: { mode: 'scheduled', send_at: new Date(Date.now() + 86_400_000).toISOString() },
    });

    assert.deepEqual(await uuidsOf(who, { subject: 'invoice' }), sorted([invoice, shouting, scheduled]));
    assert.deepEqual(await uuidsOf(who, { subject: '  Invoice ' }), sorted([invoice, shouting, scheduled]));
    assert.deepEqual(await uuidsOf(who, { subject: 'ärger' }), [umlaut]);
    assert.deepEqual(await uuidsOf(who, { subject: 'ÄRGER IM' }), [umlaut]);
    assert.deepEqual(
      await uuidsOf(who, { subject: 'invoice', status: 'waiting' }),
      sorted([invoice, shouting]),
    );
    assert.deepEqual(await uuidsOf(who, { subject: 'invoice', tag: receipt }), [invoice]);
    assert.deepEqual(await uuidsOf(who, { subject: 'nothing like it' }), []);

    const small = await pageThrough(who, { subject: 'invoice', limit: 1 });
    assert.deepEqual(sorted(idsOf(small)), sorted([invoice, shouting, scheduled]), 'each match once');
    const other = await query(who, { filters: { subject: 'welcome' } });
    const foreign = await query(who, {
      filters: { subject: 'invoice' },
      cursor: other.body.data.next_cursor ?? 'x',
    });
    assert.equal(foreign.body.error.code, 107, 'a cursor of another subject does not continue this one');

    for (const subject of ['', '   ', 'x'.repeat(201), 12]) {
      const bad = await query(who, { filters: { subject } });
      assert.equal(bad.body.error.code, 107, JSON.stringify(subject));
      assert.equal(bad.body.error.details[0].field, 'filters.subject', JSON.stringify(bad.body.error));
    }
  });
});
