import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { suppressAutomatically } from '../../shared/suppressions/suppressions.ts';
import { mintToken, useHostEnvironment } from '../support/host.ts';
import { newAccount } from '../support/messages.ts';
import { lookup, suppressionCall } from '../support/suppressions.ts';

useHostEnvironment();

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isoWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;

describe('suppression routes: add, query, delete', () => {
  it('adds lower-cased and de-duplicated, reports existing, and deletes', async () => {
    const who = await newAccount('sup');
    const first = await suppressionCall(who, 'add', {
      emails: ['Ada@Example.NET', 'ada@example.net', 'Grace Hopper <grace@example.net>'],
    });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.data, { added: ['ada@example.net', 'grace@example.net'], existing: [] });

    const again = await suppressionCall(who, 'add', { emails: ['ADA@example.net', 'linus@example.net'] });
    assert.deepEqual(again.body.data, { added: ['linus@example.net'], existing: ['ada@example.net'] });

    const entry = await lookup(who, 'ADA@EXAMPLE.NET');
    assert.ok(entry);
    assert.equal(entry.email, 'ada@example.net');
    assert.equal(entry.reason, 'manual');
    assert.equal(entry.message_uuid, null);
    assert.match(entry.created_at, isoWithOffset);
    assert.equal(await lookup(who, 'nobody@example.net'), null);

    const removed = await suppressionCall(who, 'delete', {
      emails: ['Ada@example.net', 'nobody@example.net'],
    });
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.body.data, { deleted: ['ada@example.net'], not_found: ['nobody@example.net'] });
    assert.equal(await lookup(who, 'ada@example.net'), null);
    assert.ok(await lookup(who, 'grace@example.net'));
  });

  it('dry runs of add and delete report what they would do and change nothing', async () => {
    const who = await newAccount('sup');
    await suppressionCall(who, 'add', { emails: ['kept@example.net'] });
    const dryAdd = await suppressionCall(
      who,
      'add',
      { emails: ['new@example.net', 'kept@example.net'] },
      { query: { dry_run: 'true' } },
    );
    assert.equal(dryAdd.status, 200, dryAdd.text);
    assert.deepEqual(dryAdd.body.data, {
      added: ['new@example.net'],
      existing: ['kept@example.net'],
      dry_run: true,
    });
    assert.equal(await lookup(who, 'new@example.net'), null);

    const dryDelete = await suppressionCall(
      who,
      'delete',
      { emails: ['kept@example.net', 'new@example.net'] },
      { query: { dry_run: 'true' } },
    );
    assert.deepEqual(dryDelete.body.data, {
      deleted: ['kept@example.net'],
      not_found: ['new@example.net'],
      dry_run: true,
    });
    assert.ok(await lookup(who, 'kept@example.net'));

    const dryQuery = await suppressionCall(
      who,
      'query',
      { email: 'kept@example.net' },
      { query: { dry_run: 'true' } },
    );
    assert.equal(dryQuery.body.error?.code, 114);
  });

  it('validates strictly: 10000001 for a bad address, 107 for the rest, with details', async () => {
    const who = await newAccount('sup');
    const cases: Array<[string, 'query' | 'add' | 'delete', unknown, number, string?]> = [
      ['bad address to add', 'add', { emails: ['ok@example.net', 'not-an-address'] }, 10000001, 'emails[1]'],
      ['bad address to delete', 'delete', { emails: ['a@b'] }, 10000001, 'emails[0]'],
      ['bad address to query', 'query', { email: 'x@@example.net' }, 10000001, 'email'],
      ['header injection', 'add', { emails: ['a@example.net\r\nBcc: x@example.net'] }, 10000001],
      ['unknown field', 'add', { emails: ['a@example.net'], reason: 'manual' }, 107],
      ['typo in a filter', 'query', { filters: { reasons: 'manual' } }, 107],
      ['empty list', 'add', { emails: [] }, 107],
      [
        'too many',
        'delete',
        { emails: Array.from({ length: 1001 }, (_, index) => `a${index}@example.net`) },
        107,
        'emails',
      ],
      ['not a list', 'add', { emails: 'a@example.net' }, 107, 'emails'],
      ['unknown reason', 'query', { filters: { reason: 'bounce' } }, 107, 'filters.reason'],
      ['limit too large', 'query', { filters: { limit: 1001 } }, 107, 'filters.limit'],
      ['date without offset', 'query', { filters: { date_from: '2026-11-01T00:00:00' } }, 107],
      ['email and filters', 'query', { email: 'a@example.net', filters: {} }, 107, 'email'],
      ['forged cursor', 'query', { cursor: 'eyJ2IjoxfQ' }, 107, 'cursor'],
    ];
    for (const [name, action, body, code, field] of cases) {
      const response = await suppressionCall(who, action, body);
      assert.equal(response.body.error?.code, code, `${name}: ${response.text}`);
      assert.ok(Array.isArray(response.body.error.details) && response.body.error.details.length > 0, name);
      if (field !== undefined) {
        assert.ok(
          response.body.error.details.some((detail: { field: string }) => detail.field === field),
          `${name}: ${response.text}`,
        );
      }
    }
    const noJson = await suppressionCall(who, 'add', undefined, {
      rawBody: '{"emails": [',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(noJson.body.error?.code, 106);
  });

  it('needs suppressions:read to query and suppressions:write to change', async () => {
    const who = await newAccount('sup');
    const reader = { token: await mintToken({ account: who.account, scopes: ['suppressions:read'] }) };
    const sender = { token: await mintToken({ account: who.account, scopes: ['messages:send'] }) };
    assert.equal((await suppressionCall(reader, 'query', { email: 'a@example.net' })).status, 200);
    assert.equal((await suppressionCall(reader, 'add', { emails: ['a@example.net'] })).body.error?.code, 113);
    assert.equal(
      (await suppressionCall(reader, 'delete', { emails: ['a@example.net'] })).body.error?.code,
      113,
    );
    assert.equal((await suppressionCall(sender, 'query', { filters: {} })).body.error?.code, 113);
  });
});

describe('suppression list paging', () => {
  it('pages newest first through every entry, by reason and by date, with a cursor bound to the filters', async () => {
    const who = await newAccount('page');
    const expected: Array<{ email: string; reason: string }> = [];
    // Seven entries at distinct times: manual ones through the API, automatic ones as the delivery
    // pipeline makes them.
    for (let index = 0; index < 7; index++) {
      const email = `p${index}@example.net`;
      if (index % 3 === 0) {
        await suppressionCall(who, 'add', { emails: [email] });
        expected.push({ email, reason: 'manual' });
      } else {
        const reason = index % 3 === 1 ? 'hard_bounce' : 'complaint';
        await suppressAutomatically(who.account, [
          {
            email,
            reason,
            detail: `${reason} of p${index}`,
            message_uuid: '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e',
          },
        ]);
        expected.push({ email, reason });
      }
      await pause(5);
    }
    const newestFirst = [...expected].reverse();

    const collect = async (filters: Record<string, unknown>) => {
      const seen: Array<Record<string, any>> = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Awaited<ReturnType<typeof suppressionCall>> = await suppressionCall(who, 'query', {
          filters,
          ...(cursor === null ? {} : { cursor }),
        });
        assert.equal(page.status, 200, page.text);
        assert.equal(page.body.data.count, page.body.data.suppressions.length);
        seen.push(...page.body.data.suppressions);
        cursor = page.body.data.next_cursor;
        pages += 1;
        assert.ok(pages < 20);
      } while (cursor !== null);
      return { seen, pages };
    };

    const all = await collect({ limit: 2 });
    assert.deepEqual(
      all.seen.map((entry) => entry.email),
      newestFirst.map((entry) => entry.email),
    );
    assert.ok(all.pages >= 4);
    for (const entry of all.seen) {
      assert.match(entry.created_at, isoWithOffset);
      assert.equal(entry.reason, expected.find((candidate) => candidate.email === entry.email)?.reason);
    }
    const bounced = all.seen.find((entry) => entry.reason === 'hard_bounce');
    assert.equal(bounced?.message_uuid, '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e');
    assert.match(bounced?.detail, /^hard_bounce of p/);

    for (const reason of ['manual', 'hard_bounce', 'complaint']) {
      const byReason = await collect({ reason, limit: 1 });
      assert.deepEqual(
        byReason.seen.map((entry) => entry.email),
        newestFirst.filter((entry) => entry.reason === reason).map((entry) => entry.email),
        reason,
      );
    }

    // Dates bound created_at: only the middle entries.
    const middle = all.seen.slice(2, 5);
    const window = await collect({
      date_from: middle[2]?.created_at,
      date_to: middle[0]?.created_at,
      limit: 1000,
    });
    assert.deepEqual(
      window.seen.map((entry) => entry.email),
      middle.map((entry) => entry.email),
    );

    // A cursor only continues the query it came from, and only for its account.
    const first = await suppressionCall(who, 'query', { filters: { limit: 1 } });
    const cursor = first.body.data.next_cursor as string;
    const otherFilters = await suppressionCall(who, 'query', {
      filters: { limit: 1, reason: 'manual' },
      cursor,
    });
    assert.equal(otherFilters.body.error?.code, 107);
    const stranger = await newAccount('page');
    const foreign = await suppressionCall(stranger, 'query', { filters: { limit: 1 }, cursor });
    assert.equal(foreign.body.error?.code, 107);

    // An empty list is an empty page.
    const empty = await suppressionCall(stranger, 'query', {});
    assert.deepEqual(empty.body.data, { suppressions: [], count: 0, next_cursor: null });
  });
});
