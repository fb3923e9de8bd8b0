import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { call, mintToken } from '../support/host.ts';
import {
  add,
  created,
  forceStatus,
  mapLimit,
  newAccount,
  objectExists,
  rawItem,
  remove,
} from '../support/messages.ts';

const held = { scheduling: { mode: 'manual-wait' } };

describe('POST /message/delete-1.0', () => {
  it('sorts every id into deleted, not_found, unauthorized and protected, in request order (rules 3–5)', async () => {
    const who = await newAccount();
    const other = await newAccount();
    const mine = await mapLimit(Array.from({ length: 3 }), 3, () => created(who, held));
    const shielded = await mapLimit(['sent', 'delivered', 'bounced', 'processing'], 4, async (status) => {
      const uuid = await created(who, held);
      assert.ok(await forceStatus(uuid, status));
      return uuid;
    });
    const theirs = await created(other, held);
    const unknown = ['0f0e0d0c-0b0a-4908-8706-050403020100', '1f0e0d0c-0b0a-4908-8706-050403020100'];
    const order = [
      unknown[0],
      shielded[3],
      mine[2],
      theirs,
      shielded[0],
      mine[0],
      unknown[1],
      shielded[1],
      mine[1],
      shielded[2],
    ] as string[];

    const response = await remove(who, order);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body, {
      data: {
        deleted: [mine[2], mine[0], mine[1]],
        not_found: [unknown[0], unknown[1]],
        unauthorized: [theirs],
        protected: [shielded[3], shielded[0], shielded[1], shielded[2]],
      },
    });
    for (const uuid of mine) assert.equal(await rawItem(uuid), undefined);
    for (const uuid of [...shielded, theirs]) assert.ok(await rawItem(uuid));
  });

  it('deletes cancelled, failed and scheduled messages, and removes their S3 objects', async () => {
    const who = await newAccount();
    const attachments = [{ filename: 'a.txt', content_type: 'text/plain', content: 'aGk=' }];
    const cancelled = await created(who, {
      ...held,
      attachments,
      content: { kind: 'mixed', text: 't', html: '<p>h</p>' },
    });
    await add(who, { scheduling: { mode: 'manual-cancel', message_uuid: cancelled } });
    const failed = await created(who, held);
    await forceStatus(failed, 'failed');
    const scheduled = await created(who, {
      scheduling: { mode: 'scheduled', send_at: new Date(Date.now() + 3600_000).toISOString() },
    });
    const keys = [
      `messages/${cancelled}/text.txt`,
      `messages/${cancelled}/body.html`,
      `messages/${cancelled}/attachments/0`,
    ];
    for (const key of keys) assert.ok(await objectExists(key), key);

    const response = await remove(who, [cancelled, failed, scheduled]);
    assert.deepEqual(response.body.data.deleted, [cancelled, failed, scheduled]);
    for (const key of keys) assert.equal(await objectExists(key), false, key);
    assert.equal(await objectExists(`messages/${failed}/text.txt`), false);
    const again = await remove(who, [cancelled]);
    assert.deepEqual(again.body.data.not_found, [cancelled]);
  });

  it('lists a repeated id once and accepts upper-case ids', async () => {
    const who = await newAccount();
    const uuid = await created(who, held);
    const response = await remove(who, [uuid.toUpperCase(), uuid]);
    assert.deepEqual(response.body.data, { deleted: [uuid], not_found: [], unauthorized: [], protected: [] });
  });

  it('refuses malformed ids, an empty list and more than 1000 ids with 107', async () => {
    const who = await newAccount();
    for (const ids of [
      ['not-a-uuid'],
      [],
      Array.from({ length: 1001 }, () => '0f0e0d0c-0b0a-4908-8706-050403020100'),
    ]) {
      const response = await remove(who, ids);
      assert.equal(response.status, 406);
      assert.equal(response.body.error.code, 107);
      assert.ok(response.body.error.details.length > 0);
    }
    const noList = await call('POST', '/message/delete-1.0', { token: who.token, body: {} });
    assert.equal(noList.body.error.code, 107);
  });

  it('needs messages:delete', async () => {
    const who = await newAccount();
    const uuid = await created(who, held);
    const token = await mintToken({ account: who.account, scopes: ['messages:read', 'messages:send'] });
    const response = await call('POST', '/message/delete-1.0', { token, body: { message_uuids: [uuid] } });
    assert.equal(response.body.error.code, 113);
    assert.ok(await rawItem(uuid));
  });

  it('dry run: reports what would happen and deletes nothing', async () => {
    const who = await newAccount();
    const other = await newAccount();
    const mine = await created(who, held);
    const sent = await created(who, held);
    await forceStatus(sent, 'sent');
    const theirs = await created(other, held);
    const unknown = '2f0e0d0c-0b0a-4908-8706-050403020100';
    const response = await remove(who, [mine, sent, theirs, unknown], { dry_run: 'true' });
    assert.deepEqual(response.body.data, {
      deleted: [mine],
      not_found: [unknown],
      unauthorized: [theirs],
      protected: [sent],
      dry_run: true,
    });
    assert.ok(await rawItem(mine));
    assert.ok(await objectExists(`messages/${mine}/text.txt`));
  });

  it('never deletes a message that a sender claims (queued → processing) at the same moment', async () => {
    const who = await newAccount();
    for (let round = 0; round < 3; round++) {
      // held first, then released together: queued messages, as the sender sees them
      const uuids = await mapLimit(Array.from({ length: 20 }), 6, () => created(who, held));
      await mapLimit(uuids, 6, (uuid) =>
        add(who, { scheduling: { mode: 'manual-send', message_uuid: uuid } }),
      );
      const claims = new Map<string, boolean>();
      const claimAll = mapLimit(uuids, 10, async (uuid) => {
        claims.set(uuid, await forceStatus(uuid, 'processing', 'queued'));
      });
      const deletes = Promise.all(
        [uuids.slice(0, 10), uuids.slice(10)].map((batch) => remove(who, [...batch].reverse())),
      );
      const [, responses] = await Promise.all([claimAll, deletes]);
      const deleted = new Set(responses.flatMap((response) => response.body.data.deleted as string[]));
      const kept = new Set(responses.flatMap((response) => response.body.data.protected as string[]));
      for (const uuid of uuids) {
        const item = await rawItem(uuid);
        assert.ok(deleted.has(uuid) !== kept.has(uuid), `${uuid} is in exactly one list`);
        if (claims.get(uuid) === true) {
          assert.ok(!deleted.has(uuid), `claimed message ${uuid} was deleted`);
          assert.equal(item?.status, 'processing');
        }
        if (deleted.has(uuid)) assert.equal(item, undefined);
        if (kept.has(uuid)) assert.ok(item !== undefined, `protected message ${uuid} is gone`);
      }
    }
  });
});
