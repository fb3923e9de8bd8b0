import assert from 'node:assert/strict';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, test } from 'vitest';
import { runAdmin } from '../../infra/admin/cli.ts';
import { dispatchDue, watchLagMs } from '../../shared/delivery/dispatch.ts';
import {
  adoptLegacyInFlight,
  type DeliveryMessage,
  getDeliveryMessage,
} from '../../shared/delivery/store/message-delivery.ts';
import { registerDomain } from '../../shared/domains/registry.ts';
import { listMessages } from '../../shared/messages/query.ts';
import { moveWhileOld } from '../../shared/messages/store/message-layout-migration.ts';
import { dynamo } from '../../shared/platform/aws/dynamo.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { accountShardOf, keys, legacyInFlightShardOf } from '../../shared/platform/table/keys.ts';
import { isSettled, putTestMessage, waitForMessage, watchAt, workEntryTimeOf } from '../support/delivery.ts';
import { uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';
import { forceStatus, rawItem } from '../support/messages.ts';

/*
 * Tables written by releases before listing lanes and watch entries hold `sent` and `delivered`
 * messages listed under their status, and in-flight messages on `INFLIGHT#<n>` with no listing
 * entry. `npm run admin -- messages migrate-layout` moves them once (docs/decisions/0020-watch-entries.md); the
 * dispatcher drains `INFLIGHT#<n>` meanwhile. Messages are written here in the old layout.
 */
useHostEnvironment();

const account = uniqueAccount('layout');
const domain = uniqueDomain('layout');
await registerDomain(domain, account);

/** Rewrites a message's index keys as an earlier release wrote them for its status. */
async function oldLayout(uuid: string): Promise<void> {
  const item = await rawItem(uuid);
  const shard = accountShardOf(uuid);
  const inFlight = ['queued', 'processing'].includes(String(item?.status));
  await dynamo().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.message(uuid),
      UpdateExpression: inFlight ? 'SET gsi3pk = :pk, gsi3sk = :sk REMOVE gsi2pk' : 'SET gsi2pk = :status',
      ExpressionAttributeValues: inFlight
        ? {
            ':pk': keys.legacyInFlight(legacyInFlightShardOf(account, shard)),
            ':sk': `${account}#${item?.created_at}#${uuid}`,
          }
        : { ':status': `STATUS#${account}#${item?.status}#${shard}` },
    }),
  );
}

const listed = async (status: string) =>
  (await listMessages(account, { status: status as 'delivered' }, undefined)).messages.map(
    (message) => message.message_uuid,
  );

describe('moving messages of earlier releases to listing lanes and watch entries', () => {
  test('the admin command lists old sent and delivered messages on the accepted lane and watches old in-flight ones; a second run moves nothing', async () => {
    const [delivered, sent, bounced] = (await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        putTestMessage({ account, domain, to: [`${name}@example.net`], status: 'sent' }),
      ),
    )) as [string, string, string];
    assert.ok(await forceStatus(delivered, 'delivered', 'sent'));
    assert.ok(await forceStatus(bounced, 'bounced', 'sent'));
    // Queued by an earlier release whose enqueue was lost: due already.
    const stranded = await putTestMessage({
      account,
      domain,
      to: ['d@example.net'],
      dueAtMs: Date.now() - 1_000,
    });
    const oldAt = Date.now();
    for (const uuid of [delivered, sent, bounced, stranded]) await oldLayout(uuid);
    assert.deepEqual(await listed('delivered'), []);
    assert.deepEqual(await listed('sent'), []);
    const bouncedBefore = await rawItem(bounced);

    const first = await runAdmin(['messages', 'migrate-layout', '--account', account]);
    assert.equal(first.code, 0, first.err);
    // Three, or two when a dispatcher run (the host's, or another test's) drained the in-flight one
    // from the old index first, or meanwhile: it ends in the same place either way.
    assert.match(
      String(first.out),
      /^moved (3 message\(s\) to the new layout \(0|2 message\(s\) to the new layout \([01]) changed meanwhile/,
    );
    assert.deepEqual(await listed('delivered'), [delivered]);
    assert.deepEqual(await listed('sent'), [sent]);
    assert.deepEqual(await rawItem(bounced), bouncedBefore, 'already in the new layout');
    const moved = await rawItem(stranded);
    assert.match(String(moved?.gsi2pk), new RegExp(`^STATUS#${account}#accepted#[0-3]$`));
    assert.match(String(moved?.gsi3pk), /^WATCH#\d+$/);
    // Watched ahead of the move (the command: as a message queued now is, time enough for the
    // operator's clock to be off; a dispatcher: at least its lag ahead); brought forward here, the
    // next dispatcher run queues it again.
    const watchedAt = workEntryTimeOf(moved);
    assert.ok(watchedAt >= oldAt + watchLagMs, `watched ${watchedAt - oldAt} ms after the old layout`);
    await watchAt(stranded, Date.now() - 1_000);
    await dispatchDue();
    const message = await waitForMessage(stranded, isSettled);
    assert.equal(message.status, 'delivered');
    assert.ok(message.history.some((entry) => /no sender had claimed it/.test(entry.detail ?? '')));

    const again = await runAdmin(['messages', 'migrate-layout', '--account', account]);
    assert.equal(again.code, 0, again.err);
    assert.match(String(again.out), /^moved 0 message\(s\)/);
    const usage = await runAdmin(['messages', 'migrate-layout', 'extra']);
    assert.equal(usage.code, 2);
  });

  test('a sent message delivered between the read and the move is still moved (its listing key was not)', async () => {
    const uuid = await putTestMessage({ account, domain, to: ['f@example.net'], status: 'sent' });
    await oldLayout(uuid);
    const read = (await rawItem(uuid)) as Record<string, unknown>;
    assert.ok(await forceStatus(uuid, 'delivered', 'sent'));
    assert.equal((await rawItem(uuid))?.gsi2pk, read.gsi2pk, 'sent → delivered leaves the listing key');
    assert.equal(await moveWhileOld(read), true);
    assert.match(String((await rawItem(uuid))?.gsi2pk), new RegExp(`^STATUS#${account}#accepted#[0-3]$`));
    assert.ok((await listed('delivered')).includes(uuid));
    // Once moved, a stale copy of the item needs nothing.
    assert.equal(await moveWhileOld(read), false);
  });

  test('the dispatcher does not move a message of the old index to the lane of a status it no longer has', async () => {
    // Read by a run as processing; bounced by a sender before the run moves it.
    const uuid = await putTestMessage({
      account,
      domain,
      to: ['g@example.net'],
      status: 'processing',
      leaseUntil: Date.now() + 3_600_000,
      dueAtMs: Date.now() + 3_600_000,
    });
    await oldLayout(uuid);
    const read = (await getDeliveryMessage(uuid)) as DeliveryMessage;
    assert.ok(await forceStatus(uuid, 'bounced', 'processing'));
    assert.equal(await adoptLegacyInFlight(read, Date.now() + 60_000), false);
    const item = await rawItem(uuid);
    assert.match(String(item?.gsi2pk), new RegExp(`^STATUS#${account}#bounced#[0-3]$`));
    assert.match(String(item?.gsi3pk), /^INFLIGHT#\d+$/, 'left for the next run, which reads it again');
  });

  test('the dispatcher moves a message this release settled while it was on the old in-flight index off it', async () => {
    // Added by an earlier release, then sent and bounced by this one, which leaves the work index
    // alone: the message is listed as bounced but still on `INFLIGHT#<n>`.
    const uuid = await putTestMessage({
      account,
      domain,
      to: ['e@example.net'],
      dueAtMs: Date.now() + 3_600_000,
    });
    await oldLayout(uuid);
    assert.ok(await forceStatus(uuid, 'bounced', 'queued'));
    assert.match(String((await rawItem(uuid))?.gsi3pk), /^INFLIGHT#\d+$/);
    await dispatchDue();
    const item = await rawItem(uuid);
    assert.equal(item?.gsi3pk, undefined);
    assert.equal(item?.gsi3sk, undefined);
    assert.match(String(item?.gsi2pk), new RegExp(`^STATUS#${account}#bounced#[0-3]$`));
    assert.ok((await listed('bounced')).includes(uuid));
  });
});
