import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { FairScheduler } from '../../infra/local/fair-dispatch.ts';

describe('the local fair-queue scheduler', () => {
  it('a tenant with a backlog never takes the last free slot: a quiet tenant starts at once', () => {
    const scheduler = new FairScheduler<string>({ slots: 4, batchSize: 10 });
    for (let index = 0; index < 1000; index++) scheduler.add('noisy', `a${index}`);
    const started = [scheduler.next(), scheduler.next(), scheduler.next()];
    assert.deepEqual(
      started.map((batch) => [batch?.group, batch?.items.length]),
      [
        ['noisy', 10],
        ['noisy', 10],
        ['noisy', 10],
      ],
    );
    assert.equal(scheduler.next(), undefined, 'the fourth slot is kept');
    scheduler.add('quiet', 'b0');
    assert.deepEqual(scheduler.next(), { group: 'quiet', items: ['b0'] });
    assert.equal(scheduler.next(), undefined, 'every slot busy');
    scheduler.done('noisy');
    assert.equal(scheduler.next(), undefined, 'the freed slot is the kept one again');
    scheduler.done('quiet');
    assert.equal(scheduler.next()?.group, 'noisy');
  });

  it('among tenants that may start, the one with the fewest running goes first, then the least recently served', () => {
    const scheduler = new FairScheduler<string>({ slots: 6, batchSize: 1 });
    for (const group of ['a', 'b', 'c']) for (let index = 0; index < 5; index++) scheduler.add(group, group);
    const order = Array.from({ length: 5 }, () => scheduler.next()?.group);
    assert.deepEqual(order, ['a', 'b', 'c', 'a', 'b']);
    assert.equal(scheduler.next(), undefined, 'one slot kept');
  });

  it('one slot: no reserve; a message without a group is a tenant of its own', () => {
    const scheduler = new FairScheduler<number>({ slots: 1, batchSize: 10 });
    scheduler.add('a', 1);
    scheduler.add('a', 2);
    assert.deepEqual(scheduler.next(), { group: 'a', items: [1, 2] });
    assert.equal(scheduler.active, 1);
    scheduler.done('a');
    assert.equal(scheduler.active, 0);
  });

  it('waiting messages can be listed and dropped', () => {
    const scheduler = new FairScheduler<number>({ slots: 2, batchSize: 10 });
    for (let index = 0; index < 6; index++) scheduler.add(index % 2 === 0 ? 'even' : 'odd', index);
    assert.equal(scheduler.waiting, 6);
    assert.deepEqual(scheduler.discard((item) => item < 3).sort(), [0, 1, 2]);
    assert.equal(scheduler.waiting, 3);
    assert.deepEqual(scheduler.waitingItems().sort(), [3, 4, 5]);
  });

  it('every message runs exactly once, never more than the slots at once, and no tenant holds every slot while another waits', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.boolean()), { maxLength: 300 }),
        (slots, batchSize, steps) => {
          const scheduler = new FairScheduler<number>({ slots, batchSize });
          const running: Array<{ group: string; items: number[] }> = [];
          const ran: number[] = [];
          let added = 0;
          const check = () => {
            assert.ok(scheduler.active <= slots);
            // With two slots or more, no tenant ever holds all of them: one is always there for a
            // tenant with nothing running.
            if (slots > 1) {
              for (const group of new Set(running.map((batch) => batch.group)))
                assert.ok(running.filter((batch) => batch.group === group).length <= slots - 1);
            }
          };
          for (const [group, finish] of steps) {
            if (finish && running.length > 0) {
              const batch = running.shift() as { group: string; items: number[] };
              scheduler.done(batch.group);
            } else {
              scheduler.add(group, added++);
            }
            for (let batch = scheduler.next(); batch !== undefined; batch = scheduler.next()) {
              assert.ok(batch.items.length <= batchSize);
              running.push(batch);
              ran.push(...batch.items);
            }
            check();
          }
          while (running.length > 0 || scheduler.waiting > 0) {
            const batch = running.shift();
            if (batch !== undefined) scheduler.done(batch.group);
            for (let next = scheduler.next(); next !== undefined; next = scheduler.next()) {
              running.push(next);
              ran.push(...next.items);
            }
            check();
          }
          assert.deepEqual(
            [...ran].sort((x, y) => x - y),
            Array.from({ length: added }, (_, index) => index),
          );
        },
      ),
    );
  });
});
