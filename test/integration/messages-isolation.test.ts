import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it, vi } from 'vitest';
import { add, newAccount, query, rawItem, remove, textMessage } from '../support/messages.ts';

type Action =
  | { kind: 'add'; mode: 'immediate' | 'manual-wait' | 'scheduled'; subject: string }
  | { kind: 'cancel'; pick: number }
  | { kind: 'release'; pick: number }
  | { kind: 'delete'; pick: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    kind: fc.constant('add' as const),
    mode: fc.constantFrom('immediate' as const, 'manual-wait' as const, 'scheduled' as const),
    subject: fc.string({ maxLength: 20 }).filter((text) => !/[\r\n]/.test(text)),
  }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
);

describe('isolation between accounts', () => {
  it('whatever one account does, the other sees none of it and can touch none of it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 5 }), async (actions) => {
        const owner = await newAccount('iso');
        const stranger = await newAccount('iso');
        const uuids: string[] = [];
        const pick = (n: number) => uuids[n % Math.max(1, uuids.length)];
        for (const step of actions) {
          if (step.kind === 'add') {
            const scheduling =
              step.mode === 'scheduled'
                ? { mode: step.mode, send_at: new Date(Date.now() + 86_400_000).toISOString() }
                : { mode: step.mode };
            const response = await add(owner, textMessage(owner, { subject: step.subject, scheduling }));
            assert.equal(response.status, 200, response.text);
            uuids.push(response.body.data.message_uuid);
          } else if (uuids.length > 0) {
            const target = pick(step.pick) as string;
            if (step.kind === 'delete') await remove(owner, [target]);
            else {
              const mode = step.kind === 'cancel' ? 'manual-cancel' : 'manual-send';
              await add(owner, { scheduling: { mode, message_uuid: target } });
            }
          }
        }
        // the stranger's list is empty, whatever the filters
        for (const filters of [
          {},
          { status: ['queued', 'waiting', 'scheduled', 'cancelled', 'processing'] },
        ]) {
          const list = await query(stranger, { filters });
          assert.equal(list.body.data.count, 0);
          assert.deepEqual(list.body.data.messages, []);
        }
        for (const uuid of uuids) {
          const before = await rawItem(uuid);
          const read = await query(stranger, { message_uuid: uuid });
          assert.equal(read.body.error?.code, 112);
          for (const mode of ['manual-send', 'manual-cancel']) {
            const act = await add(stranger, { scheduling: { mode, message_uuid: uuid } });
            assert.equal(act.body.error?.code, 112);
          }
          const removal = await remove(stranger, [uuid]);
          const expected = before === undefined ? 'not_found' : 'unauthorized';
          assert.deepEqual(removal.body.data[expected], [uuid]);
          // Still there, and not cancelled by the stranger (the delivery pipeline may move queued
          // messages on meanwhile, but it never cancels and never deletes).
          const after = await rawItem(uuid);
          assert.equal(after === undefined, before === undefined);
          if (before !== undefined && before.status !== 'cancelled')
            assert.notEqual(after?.status, 'cancelled');
          if (before !== undefined && ['waiting', 'scheduled'].includes(before.status)) {
            assert.equal(after?.updated_at, before.updated_at);
          }
        }
        // and the owner still sees every message it did not delete. Lists are eventually
        // consistent (docs/messages.md): a message the sender moves while the list reads its
        // index shards can be missing from that one answer, so the list is read until it settles.
        const remaining: string[] = [];
        for (const uuid of uuids) if ((await rawItem(uuid)) !== undefined) remaining.push(uuid);
        const listed = async () =>
          (await query(owner, { filters: { limit: 1000 } })).body.data.messages
            .map((m: any) => m.message_uuid)
            .sort();
        await vi.waitFor(async () => assert.deepEqual(await listed(), [...remaining].sort()), {
          timeout: 5_000,
          interval: 250,
        });
      }),
      { numRuns: 8 },
    );
  });
});
