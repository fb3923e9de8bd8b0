import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { registerDomain } from '../../shared/domains/registry.ts';
import { addMessage } from '../../shared/messages/add.ts';
import { messageAddRequest } from '../../shared/messages/schemas.ts';
import { checkInput } from '../../shared/platform/middleware/validate-input.ts';
import { accountShardOf, keys, workShardOf } from '../../shared/platform/table/keys.ts';
import { workEntryTimeOf } from '../support/delivery.ts';
import { uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';
import { rawItem } from '../support/messages.ts';

/*
 * The index layout the messages store writes when a message is added, released and cancelled
 * (docs/data-model.md), read from the table: its listing lane (gsi2) and its watch or due entry
 * (gsi3). messageIndexAttributes and indexChangeFor are pinned in test/unit/message-index.test.ts;
 * this checks the times add gives them. The API tests (messages-add.test.ts) assert what the API
 * answers, not these keys.
 */
useHostEnvironment();

const account = uniqueAccount('layout');
const domain = uniqueDomain('layout');
await registerDomain(domain, account);

async function add(body: Record<string, unknown>): Promise<{ uuid: string; status: string }> {
  const checked = checkInput(messageAddRequest, body);
  if ('error' in checked) throw checked.error;
  const result = await addMessage(checked.value, { account, dryRun: false, idempotencyKey: undefined, body });
  return { uuid: String(result.message_uuid), status: result.status };
}

const message = (extra: Record<string, unknown> = {}) => ({
  message_sender: `noreply@${domain}`,
  to: ['Ada <ada@recipient.test>'],
  subject: 'Hello',
  content: { kind: 'text_only', text: 'Hi there' },
  ...extra,
});
const lane = (uuid: string, name: string) =>
  keys.messagesOfAccountByLane(account, name, accountShardOf(uuid));

describe('the index entries of an added message', () => {
  it('a new message is on the accepted lane and watched from after its creation to its re-enqueue time', async () => {
    const { uuid } = await add(message());
    const item = await rawItem(uuid);
    // The sender may already have moved it on; it stays on the accepted lane through delivery.
    if (['queued', 'processing', 'sent', 'delivered'].includes(String(item?.status)))
      assert.equal(item?.gsi2pk, lane(uuid, 'accepted'));
    assert.equal(item?.gsi3pk, keys.watch(workShardOf(uuid)));
    assert.ok(String(item?.gsi3sk).endsWith(`#${uuid}`));
    const watchAt = workEntryTimeOf(item);
    assert.ok(watchAt > Date.parse(String(item?.created_at)), 'watched after its creation');
    if (item?.status === 'queued') {
      assert.ok(Date.parse(String(item.due_at)) > Date.parse(String(item.created_at)));
      assert.ok(watchAt <= Date.parse(String(item.due_at)), 'watched by its re-enqueue time');
    }
  });

  it('a scheduled message is due at its send time; a held one when its 30-day hold ends', async () => {
    const sendAt = new Date(Date.now() + 2 * 24 * 3600_000);
    const scheduled = await add(
      message({ scheduling: { mode: 'scheduled', send_at: sendAt.toISOString() } }),
    );
    const scheduledItem = await rawItem(scheduled.uuid);
    assert.equal(scheduledItem?.gsi2pk, lane(scheduled.uuid, 'scheduled'));
    assert.equal(scheduledItem?.gsi3pk, keys.due(workShardOf(scheduled.uuid)));
    assert.equal(scheduledItem?.gsi3sk, `${sendAt.toISOString()}#${scheduled.uuid}`);

    const waiting = await add(message({ scheduling: { mode: 'manual-wait' } }));
    const waitingItem = await rawItem(waiting.uuid);
    assert.equal(waitingItem?.gsi2pk, lane(waiting.uuid, 'waiting'));
    assert.equal(waitingItem?.gsi3pk, keys.due(workShardOf(waiting.uuid)));
    assert.equal(
      workEntryTimeOf(waitingItem),
      Date.parse(String(waitingItem?.created_at)) + 30 * 24 * 3600 * 1000,
    );
  });

  it('manual-send moves a held message to the accepted lane and a watch entry; manual-cancel drops its due entry', async () => {
    const waiting = await add(message({ scheduling: { mode: 'manual-wait' } }));
    assert.equal(
      (await add({ scheduling: { mode: 'manual-send', message_uuid: waiting.uuid } })).status,
      'queued',
    );
    const released = await rawItem(waiting.uuid);
    if (['queued', 'processing', 'sent', 'delivered'].includes(String(released?.status)))
      assert.equal(released?.gsi2pk, lane(waiting.uuid, 'accepted'));
    assert.equal(released?.gsi3pk, keys.watch(workShardOf(waiting.uuid)));

    const sendAt = new Date(Date.now() + 2 * 24 * 3600_000);
    const scheduled = await add(
      message({ scheduling: { mode: 'scheduled', send_at: sendAt.toISOString() } }),
    );
    assert.equal(
      (await add({ scheduling: { mode: 'manual-cancel', message_uuid: scheduled.uuid } })).status,
      'cancelled',
    );
    const cancelled = await rawItem(scheduled.uuid);
    assert.equal(cancelled?.gsi2pk, lane(scheduled.uuid, 'cancelled'));
    assert.equal(cancelled?.gsi3pk, undefined);
    assert.equal(cancelled?.gsi3sk, undefined);
  });
});
