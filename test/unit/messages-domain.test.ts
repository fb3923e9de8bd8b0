import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { sendAtProblem } from '../../shared/messages/model/scheduling.ts';
import { domainOf, parseAddress } from '../../shared/platform/mail/addresses.ts';
import { decodeCursor, encodeCursor } from '../../shared/platform/paging/cursor.ts';
import { chunkSize, type KeyStream, mergeStreams } from '../../shared/platform/paging/merge.ts';

describe('parseAddress', () => {
  it('accepts the three address forms and normalises IDN domains to lower-case A-labels', () => {
    assert.deepEqual(parseAddress('a@B.Example'), { ok: true, address: { email: 'a@b.example' } });
    assert.deepEqual(parseAddress('"Doe, Jane" <jane@bücher.example>'), {
      ok: true,
      address: { email: 'jane@xn--bcher-kva.example', name: 'Doe, Jane' },
    });
    assert.deepEqual(parseAddress({ email: 'x@y.example', name: 'X' }), {
      ok: true,
      address: { email: 'x@y.example', name: 'X' },
    });
  });

  it('refuses what is not one plain mailbox', () => {
    for (const input of [
      'plain',
      'a@b',
      'a@b.example, c@d.example',
      'Team: a@b.example;',
      'a@[192.0.2.1]',
      'ü@b.example',
      'a@-bad-.example',
      `${'x'.repeat(65)}@b.example`,
      { email: 'Name <a@b.example>' },
    ]) {
      const result = parseAddress(input);
      assert.equal(result.ok, false, JSON.stringify(input));
      assert.equal(!result.ok && result.kind, 'email');
    }
  });

  it('treats CR or LF anywhere as header injection', () => {
    for (const input of [
      'a@b.example\r\nBcc: c@d.example',
      { email: 'a@b.example', name: 'A\nBcc: x@y.example' },
    ]) {
      const result = parseAddress(input);
      assert.equal(!result.ok && result.kind, 'header');
    }
  });

  it('domainOf gives the part after the last @', () => {
    assert.equal(domainOf('"a@b"@Example.TEST'), 'example.test');
  });
});

describe('sendAtProblem', () => {
  const now = new Date('2026-11-22T09:00:00Z');
  it('needs a time in the future and at most 30 days ahead', () => {
    assert.equal(sendAtProblem(new Date('2026-11-22T09:00:01Z'), now), undefined);
    assert.equal(sendAtProblem(new Date('2026-12-22T09:00:00Z'), now), undefined);
    assert.match(sendAtProblem(now, now) ?? '', /future/);
    assert.match(sendAtProblem(new Date('2026-12-22T09:00:01Z'), now) ?? '', /30 days/);
  });
});

const key = (n: number) =>
  `${new Date(Date.UTC(2026, 10, 22) + n * 1000).toISOString()}#00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('paging cursor', () => {
  it('round-trips positions and is bound to the account and the filters', () => {
    const positions = { queued: { after: key(5), done: false }, waiting: { done: true } };
    const cursor = encodeCursor('acct-1', { s: ['queued', 'waiting'] }, positions) as string;
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeCursor(cursor, 'acct-1', { s: ['queued', 'waiting'] }, ['queued', 'waiting']), {
      ok: true,
      positions,
    });
    assert.equal(
      decodeCursor(cursor, 'acct-2', { s: ['queued', 'waiting'] }, ['queued', 'waiting']).ok,
      false,
    );
    assert.equal(decodeCursor(cursor, 'acct-1', { s: ['queued'] }, ['queued']).ok, false);
    assert.equal(encodeCursor('acct-1', {}, { '*': { done: true } }), null);
  });

  it('carries one boundary when every stream continues after the same key', () => {
    const streams = ['accepted/0', 'accepted/1', 'bounced/0'];
    const positions = Object.fromEntries(streams.map((id) => [id, { after: key(7), done: false }]));
    const cursor = encodeCursor('acct-1', { s: ['*'] }, positions) as string;
    assert.ok(!Buffer.from(cursor, 'base64url').toString('utf8').includes('delivered/0'));
    assert.deepEqual(decodeCursor(cursor, 'acct-1', { s: ['*'] }, streams), { ok: true, positions });
    const forged = (b: unknown) =>
      Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(cursor, 'base64url').toString()), b })).toString(
        'base64url',
      );
    assert.equal(decodeCursor(forged('ACCOUNT#other'), 'acct-1', { s: ['*'] }, streams).ok, false);
    assert.equal(decodeCursor(forged(5), 'acct-1', { s: ['*'] }, streams).ok, false);
  });

  it('rejects tampered cursors', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const result = decodeCursor(Buffer.from(text).toString('base64url'), 'a', {}, ['*']);
        return !result.ok || result.positions['*'] !== undefined;
      }),
    );
    const forged = Buffer.from(
      JSON.stringify({ v: 1, a: 'x', f: 'y', p: { '*': 'ACCOUNT#other' } }),
    ).toString('base64url');
    assert.equal(decodeCursor(forged, 'a', {}, ['*']).ok, false);
  });
});

/**
 * One read of a fake index stream over `values` (newest first): the next `size` entries after the
 * cursor `after`, of which those `keep` selects are returned, as an index query with a filter does.
 */
function readPage(
  values: number[],
  after: string | undefined,
  size: number,
  keep: (value: number) => boolean,
) {
  const rest = after === undefined ? values : values.filter((value) => key(value) < after);
  const read = rest.slice(0, size);
  const last = read[read.length - 1];
  return {
    keys: read.filter(keep).map(key),
    more: rest.length > size,
    evaluated: read.length,
    ...(last === undefined ? {} : { last: key(last) }),
  };
}

/** Every stream at its start. */
const startOf = (keyStreams: KeyStream[]) =>
  Object.fromEntries(keyStreams.map((s) => [s.id, { done: false }])) as Record<
    string,
    { after?: string; done: boolean }
  >;

describe('mergeStreams', () => {
  it('takes a key once when two streams return it (a message read before and after it moved)', async () => {
    const streamOf = (id: string, keys: string[]): KeyStream => ({
      id,
      fetch: async (after, size) => {
        const rest = after === undefined ? keys : keys.filter((candidate) => candidate < after);
        return {
          keys: rest.slice(0, size),
          more: rest.length > size,
          evaluated: Math.min(size, rest.length),
        };
      },
    });
    const streams = [streamOf('accepted', ['k5', 'k3']), streamOf('bounced', ['k4', 'k3', 'k1'])];
    const merged = await mergeStreams(streams, {}, 10);
    assert.deepEqual(
      merged.taken.map((entry) => entry.key),
      ['k5', 'k4', 'k3', 'k1'],
    );
    const paged = await mergeStreams(streams, {}, 3);
    assert.deepEqual(
      paged.taken.map((entry) => entry.key),
      ['k5', 'k4', 'k3'],
    );
    const next = await mergeStreams(streams, paged.positions, 3);
    assert.deepEqual(
      next.taken.map((entry) => entry.key),
      ['k1'],
    );
  });

  it('shows every key once, newest first, when keys move between streams between pages', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.nat({ max: 300 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 200 }),
        async (values, streamCount, limit, moves) => {
          // A key is one message; its stream is its status, which may change between two pages.
          const home = new Map(values.map((value, index) => [value, index % streamCount]));
          const keyStreams: KeyStream[] = Array.from({ length: streamCount }, (_, index) => ({
            id: `s${index}`,
            fetch: async (after, size) => {
              const all = [...home]
                .filter(([, stream]) => stream === index)
                .map(([value]) => key(value))
                .sort()
                .reverse();
              const rest = after === undefined ? all : all.filter((candidate) => candidate < after);
              return {
                keys: rest.slice(0, size),
                more: rest.length > size,
                evaluated: Math.min(size, rest.length),
              };
            },
          }));
          let positions = startOf(keyStreams);
          const seen: string[] = [];
          let move = 0;
          for (let guard = 0; guard < 500 && !Object.values(positions).every((p) => p.done); guard++) {
            const merged = await mergeStreams(keyStreams, positions, limit);
            seen.push(...merged.taken.map((entry) => entry.key));
            positions = merged.positions;
            // between pages, a few messages change status
            for (const [which, to] of moves.slice(move, move + 3)) {
              const value = values[which % values.length] as number;
              home.set(value, to % streamCount);
            }
            move += 3;
          }
          assert.deepEqual(seen, values.map(key).sort().reverse());
        },
      ),
    );
  });

  it('pages through several sorted streams exactly once, newest first, evaluating about a page', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uniqueArray(fc.nat({ max: 500 }), { maxLength: 40 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        async (streamsRaw, limit, filtering) => {
          // each value belongs to one stream only; with `filtering`, odd values of stream 0 are
          // evaluated but dropped, as a lane read for some of its statuses drops the others that were not asked for
          const owner = new Map<number, number>();
          streamsRaw.forEach((values, stream) => {
            for (const value of values) if (!owner.has(value)) owner.set(value, stream);
          });
          const streams = streamsRaw.map((_, stream) =>
            [...owner]
              .filter(([, s]) => s === stream)
              .map(([value]) => value)
              .sort((a, b) => b - a),
          );
          const dropped = (stream: number, value: number) => filtering && stream === 0 && value % 2 === 1;
          const keyStreams: KeyStream[] = streams.map((all, index) => ({
            id: `s${index}`,
            fetch: async (after, size) => readPage(all, after, size, (value) => !dropped(index, value)),
          }));
          let positions = startOf(keyStreams);
          const seen: string[] = [];
          for (let guard = 0; guard < 1000 && !Object.values(positions).every((p) => p.done); guard++) {
            const merged = await mergeStreams(keyStreams, positions, limit);
            assert.ok(merged.taken.length <= limit);
            if (!filtering)
              assert.ok(
                merged.evaluated <= limit + keyStreams.length * chunkSize(limit, keyStreams.length),
                `evaluated ${merged.evaluated} for a page of ${limit}`,
              );
            seen.push(...merged.taken.map((entry) => entry.key));
            positions = merged.positions;
          }
          const expected = [...owner]
            .filter(([value, stream]) => !dropped(stream, value))
            .map(([value]) => value)
            .sort((a, b) => b - a)
            .map(key);
          assert.deepEqual(seen, expected);
        },
      ),
    );
  });
  it('with a work budget: pages may end short (even empty) with a cursor, and still show every kept key once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uniqueArray(fc.nat({ max: 2000 }), { maxLength: 300 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 2, max: 10 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 100 }),
        async (streamsRaw, limit, budget, keepOneIn, moves) => {
          // Every stream filters: it keeps one value in `keepOneIn` and evaluates (and drops) the rest,
          // as a lane read for a transient status does with a large backlog of another status. Messages may move
          // between streams between two pages.
          const home = new Map<number, number>();
          streamsRaw.forEach((values, stream) => {
            for (const value of values) if (!home.has(value)) home.set(value, stream);
          });
          const kept = (value: number) => value % keepOneIn === 0;
          const keyStreams: KeyStream[] = streamsRaw.map((_, index) => ({
            id: `s${index}`,
            fetch: async (after, size) => {
              const all = [...home]
                .filter(([, stream]) => stream === index)
                .map(([value]) => value)
                .sort((a, b) => b - a);
              return readPage(all, after, size, kept);
            },
          }));
          let positions = startOf(keyStreams);
          const seen: string[] = [];
          let move = 0;
          for (let guard = 0; guard < 5000 && !Object.values(positions).every((p) => p.done); guard++) {
            const merged = await mergeStreams(keyStreams, positions, limit, budget);
            assert.ok(merged.taken.length <= limit);
            assert.ok(
              merged.evaluated <= budget + keyStreams.length * chunkSize(limit, keyStreams.length),
              `evaluated ${merged.evaluated} with a budget of ${budget}`,
            );
            seen.push(...merged.taken.map((entry) => entry.key));
            positions = merged.positions;
            for (const [which, to] of moves.slice(move, move + 2)) {
              const values = [...home.keys()];
              home.set(values[which % values.length] as number, to % keyStreams.length);
            }
            move += 2;
          }
          assert.ok(
            Object.values(positions).every((p) => p.done),
            'the pages come to an end',
          );
          const expected = [...home.keys()]
            .filter(kept)
            .sort((a, b) => b - a)
            .map(key);
          assert.deepEqual(seen, expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a long run of dropped entries ends the page at the budget, reading in growing chunks', async () => {
    // 5,000 entries of another status, then the one that is asked for.
    const values = Array.from({ length: 5001 }, (_, index) => 5001 - index);
    const reads: number[] = [];
    const stream: KeyStream = {
      id: 'accepted',
      fetch: async (after, size) => {
        reads.push(size);
        return readPage(values, after, size, (value) => value === 1);
      },
    };
    const first = await mergeStreams([stream], {}, 10, 1_000);
    assert.deepEqual(first.taken, []);
    assert.equal(first.budgetReached, true);
    assert.ok(first.evaluated >= 1_000 && first.evaluated <= 1_000 + 10, `evaluated ${first.evaluated}`);
    assert.ok(reads.length <= 10, `${reads.length} reads: ${reads.join(',')}`);
    let positions = first.positions;
    const seen: string[] = [];
    for (let page = 0; page < 10 && !Object.values(positions).every((p) => p.done); page++) {
      const next = await mergeStreams([stream], positions, 10, 1_000);
      seen.push(...next.taken.map((entry) => entry.key));
      positions = next.positions;
    }
    assert.deepEqual(seen, [key(1)]);
  });
});
