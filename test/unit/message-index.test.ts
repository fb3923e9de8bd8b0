import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { messageStatuses } from '../../shared/messages/model/statuses.ts';
import {
  indexChangeFor,
  laneOf,
  messageIndexAttributes,
  statusesOfLane,
} from '../../shared/messages/store/message-index.ts';
import { accountShardOf, keys, workShardOf } from '../../shared/platform/table/keys.ts';

/**
 * The index layout of a message (docs/data-model.md): its listing lane on gsi2, its watch entry
 * (in flight) or due entry (held) on gsi3, and what each status change writes to them.
 */
const uuid = '0b6c3f9e-3f57-4c8e-9d53-5a2d4f0d1e2a';
const base = { message_uuid: uuid, account_id: 'acct', created_at: '2026-05-01T12:00:00.000Z' };
const watchAt = '2026-05-01T12:02:00.000Z';
const sendAt = '2026-05-02T08:00:00.000Z';
const lane = (name: string) => keys.messagesOfAccountByLane('acct', name, accountShardOf(uuid));
const watch = { gsi3pk: `WATCH#${workShardOf(uuid)}`, gsi3sk: `${watchAt}#${uuid}` };

describe('listing lanes', () => {
  it('the common path shares the accepted lane; every other status is a lane of its own', () => {
    for (const status of ['queued', 'processing', 'sent', 'delivered'])
      assert.equal(laneOf(status), 'accepted');
    for (const status of ['scheduled', 'waiting', 'cancelled', 'bounced', 'failed', 'suppressed'])
      assert.equal(laneOf(status), status);
    // Every status is on exactly one lane.
    const lanes = [...new Set(messageStatuses.map(laneOf))];
    assert.deepEqual(
      lanes.flatMap((name) => statusesOfLane(name, messageStatuses)).sort(),
      [...messageStatuses].sort(),
    );
  });

  it('a new message is on its lane from the start, and on a watch entry while in flight', () => {
    assert.deepEqual(messageIndexAttributes({ ...base, status: 'queued', watch_at: watchAt }), {
      gsi1sk: `${base.created_at}#${uuid}`,
      gsi2pk: lane('accepted'),
      ...watch,
    });
    assert.deepEqual(messageIndexAttributes({ ...base, status: 'scheduled', send_at: sendAt }), {
      gsi1sk: `${base.created_at}#${uuid}`,
      gsi2pk: lane('scheduled'),
      gsi3pk: `DUE#${workShardOf(uuid)}`,
      gsi3sk: `${sendAt}#${uuid}`,
    });
    assert.deepEqual(messageIndexAttributes({ ...base, status: 'delivered' }), {
      gsi1sk: `${base.created_at}#${uuid}`,
      gsi2pk: lane('accepted'),
    });
    assert.throws(() => messageIndexAttributes({ ...base, status: 'queued' }), /watch time/);
  });
});

describe('index changes of a status change', () => {
  const change = (status: string, from: string[], extra: Record<string, string> = {}) =>
    indexChangeFor({ ...base, status, send_at: sendAt, ...extra }, from);
  const none = { set: {}, remove: [] };

  it('the common lifecycle writes no index after add: claim, relay outcome and SES delivery', () => {
    assert.deepEqual(change('processing', ['queued']), none);
    assert.deepEqual(change('processing', ['processing']), none);
    assert.deepEqual(change('sent', ['processing']), none);
    assert.deepEqual(change('delivered', ['processing']), none);
    assert.deepEqual(change('delivered', ['sent']), none);
  });

  it('leaving the accepted lane moves the listing entry and leaves the watch entry', () => {
    for (const status of ['bounced', 'failed', 'suppressed'])
      assert.deepEqual(change(status, ['processing']), { set: { gsi2pk: lane(status) }, remove: [] });
    assert.deepEqual(change('bounced', ['sent']), { set: { gsi2pk: lane('bounced') }, remove: [] });
  });

  it('going in flight from a held status moves the due entry to a watch entry', () => {
    assert.deepEqual(change('queued', ['waiting', 'scheduled'], { watch_at: watchAt }), {
      set: { gsi2pk: lane('accepted'), ...watch },
      remove: [],
    });
    assert.throws(() => change('queued', ['scheduled']), /watch time/);
  });

  it('a held message that settles loses its due entry; a queued one keeps its watch entry', () => {
    assert.deepEqual(change('cancelled', ['waiting', 'scheduled', 'queued']), {
      set: { gsi2pk: lane('cancelled') },
      remove: ['gsi3pk', 'gsi3sk'],
    });
    assert.deepEqual(change('failed', ['waiting']), {
      set: { gsi2pk: lane('failed') },
      remove: ['gsi3pk', 'gsi3sk'],
    });
    assert.deepEqual(change('cancelled', ['queued']), { set: { gsi2pk: lane('cancelled') }, remove: [] });
  });
});
