import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { maxHistoryEntries } from '../../shared/messages/model/message.ts';
import {
  appendHistory,
  encodeState,
  type MessageState,
  readState,
  stateGuard,
} from '../../shared/messages/store/message-state.ts';

const at = '2026-11-24T20:03:04.678Z';
const reply = '250 2.0.0 Ok: queued as 613ef849-3983-451d-9081-9ef223d0205b';
const delivered: MessageState = {
  recipients: [
    {
      email: 'ada@recipient.test',
      name: 'Ada',
      kind: 'to',
      status: 'delivered',
      detail: reply,
      updated_at: at,
    },
    { email: 'bob@recipient.test', kind: 'to', status: 'delivered', detail: reply, updated_at: at },
  ],
  history: [
    { status: 'queued', at, detail: 'immediate' },
    { status: 'processing', at, detail: 'send attempt 1' },
    { status: 'sent', at, detail: reply },
    { status: 'delivered', at, recipient: 'ada@recipient.test', detail: `ada@recipient.test: ${reply}` },
    { status: 'delivered', at, recipient: 'bob@recipient.test', detail: `bob@recipient.test: ${reply}` },
    { status: 'delivered', at },
  ],
  relay: { message_id: '613ef849-3983-451d-9081-9ef223d0205b', response: reply },
  composed: { at, selectors: ['rsa-20261124-3f9a1c'], transport: 'smtp' },
};

describe('the compressed message state', () => {
  test('round-trips, and a typical delivered state takes a third of its JSON or less', () => {
    const stored = encodeState(delivered);
    assert.deepEqual(readState({ st: stored }).state, delivered);
    assert.ok(stored.length * 3 < JSON.stringify(delivered).length, `${stored.length} bytes`);
  });

  test('reads the base64 form a Lambda stream event carries, and items with the plain attributes', () => {
    const stored = Buffer.from(encodeState(delivered));
    assert.deepEqual(readState({ st: stored.toString('base64') }).state, delivered);
    const plain = readState({ recipients: delivered.recipients, history: delivered.history });
    assert.deepEqual(plain.state, { recipients: delivered.recipients, history: delivered.history });
    assert.equal(plain.stored, undefined);
  });

  test('a write is conditional on the state it read (or on a plain item not being converted yet)', () => {
    assert.equal(stateGuard(undefined).condition, 'attribute_not_exists(#st)');
    const stored = encodeState(delivered);
    assert.deepEqual(stateGuard(stored).values, { ':st': stored });
  });

  test('the history keeps at most 64 entries: the newest change takes the last place', () => {
    const full = Array.from({ length: maxHistoryEntries }, (_, n) => ({
      status: 'processing',
      at,
      detail: `change ${n}`,
    }));
    const next = appendHistory(full, [{ status: 'failed', at, detail: 'gave up' }]);
    assert.equal(next.length, maxHistoryEntries);
    assert.equal(next.at(-2)?.detail, 'change 62');
    assert.deepEqual(next.at(-1), { status: 'failed', at, detail: 'history full, latest change: gave up' });
    assert.equal(appendHistory(full.slice(0, 3), [{ status: 'sent', at }]).length, 4);
  });
});
