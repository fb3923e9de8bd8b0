import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { suppressAutomatically } from '../../shared/suppressions/suppressions.ts';
import { newAccount, type TestAccount } from '../support/messages.ts';
import { lookup, suppressionCall } from '../support/suppressions.ts';

type Action =
  | { kind: 'add'; picks: number[] }
  | { kind: 'delete'; picks: number[] }
  | { kind: 'bounce'; pick: number; reason: 'hard_bounce' | 'complaint' };

/** A small pool of addresses, so that both accounts keep touching the same ones. */
const pool = [
  'ada@example.net',
  'Grace@Example.NET',
  'linus@example.org',
  'x.y+tag@example.com',
  'bounce-1@example.net',
];
const picks = fc.array(fc.nat({ max: pool.length - 1 }), { minLength: 1, maxLength: 3 });
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), picks }),
  fc.record({ kind: fc.constant('delete' as const), picks }),
  fc.record({
    kind: fc.constant('bounce' as const),
    pick: fc.nat({ max: pool.length - 1 }),
    reason: fc.constantFrom('hard_bounce' as const, 'complaint' as const),
  }),
);

const emailsOf = (indexes: number[]) => indexes.map((index) => pool[index] as string);

async function listOf(who: TestAccount): Promise<Array<Record<string, any>>> {
  const page = await suppressionCall(who, 'query', { filters: { limit: 1000 } });
  assert.equal(page.status, 200, page.text);
  assert.equal(page.body.data.next_cursor, null);
  return page.body.data.suppressions;
}

describe('suppression list isolation between accounts', () => {
  it('no account can read, add or remove another account’s entries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 6 }), async (actions) => {
        const owner = await newAccount('siso');
        const stranger = await newAccount('siso');
        // The owner's list as a model: address → reason.
        const model = new Map<string, string>();
        for (const step of actions) {
          if (step.kind === 'add') {
            await suppressionCall(owner, 'add', { emails: emailsOf(step.picks) });
            for (const email of emailsOf(step.picks))
              if (!model.has(email.toLowerCase())) model.set(email.toLowerCase(), 'manual');
          } else if (step.kind === 'delete') {
            await suppressionCall(owner, 'delete', { emails: emailsOf(step.picks) });
            for (const email of emailsOf(step.picks)) model.delete(email.toLowerCase());
          } else {
            const email = pool[step.pick] as string;
            await suppressAutomatically(owner.account, [
              {
                email,
                reason: step.reason,
                detail: 'test',
                message_uuid: '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e',
              },
            ]);
            if (!model.has(email.toLowerCase())) model.set(email.toLowerCase(), step.reason);
          }
        }
        const ownerBefore = await listOf(owner);
        assert.deepEqual(
          Object.fromEntries(ownerBefore.map((entry) => [entry.email, entry.reason])),
          Object.fromEntries(model),
        );

        // Read: the stranger sees nothing of it, by list, by filter or by address.
        assert.deepEqual(await listOf(stranger), []);
        for (const reason of ['manual', 'hard_bounce', 'complaint']) {
          const page = await suppressionCall(stranger, 'query', { filters: { reason } });
          assert.equal(page.body.data.count, 0);
        }
        for (const email of pool) assert.equal(await lookup(stranger, email), null);

        // Remove: every owner address is not_found for the stranger, and stays on the owner's list.
        const removal = await suppressionCall(stranger, 'delete', { emails: pool });
        assert.deepEqual(removal.body.data.deleted, []);
        assert.equal(removal.body.data.not_found.length, pool.length);

        // Add: the stranger's own entries never change the owner's (reason, time, message).
        const added = await suppressionCall(stranger, 'add', { emails: pool });
        assert.equal(added.body.data.added.length, pool.length, 'the stranger starts from an empty list');
        await suppressionCall(stranger, 'delete', { emails: pool.slice(0, 2) });
        assert.deepEqual(await listOf(owner), ownerBefore);
        assert.equal((await listOf(stranger)).length, pool.length - 2);
      }),
      { numRuns: 8 },
    );
  });
});
