import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, test } from 'vitest';
import { dispatchDue, watchLagMs } from '../../shared/delivery/dispatch.ts';
import {
  claimMessage,
  type DeliveryMessage,
  dueAtIso,
  getDeliveryMessage,
} from '../../shared/delivery/store/message-delivery.ts';
import { registerDomain } from '../../shared/domains/registry.ts';
import { deliverySettings } from '../../shared/messages/config.ts';
import { listMessages } from '../../shared/messages/query.ts';
import { laneOf } from '../../shared/messages/store/message-index.ts';
import { dynamo } from '../../shared/platform/aws/dynamo.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { keys, workShardOf } from '../../shared/platform/table/keys.ts';
import {
  isSettled,
  putTestMessage,
  smtpTransactions,
  waitForMessage,
  watchAt,
  workEntryTimeOf,
} from '../support/delivery.ts';
import { uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';
import { forceStatus, rawItem } from '../support/messages.ts';

/*
 * The dispatcher's watch entries (docs/data-model.md, "Watch entries"; docs/delivery.md): every
 * message that goes in flight gets one on gsi3 (`WATCH#<n>`, sorted by when to look at it), left
 * behind when it settles. The dispatcher reads each watch shard only forward, from its mark (minus a
 * small lag) to the run's start. These tests call the dispatcher in this process against the shared
 * host, whose own dispatcher also runs (every minute): every assertion holds whichever run acts.
 */
useHostEnvironment();

const account = uniqueAccount('watch');
const domain = uniqueDomain('watch');
await registerDomain(domain, account);
const leftovers: string[] = [];

afterAll(async () => {
  for (const uuid of leftovers)
    await dynamo().send(new DeleteCommand({ TableName: tableName(), Key: keys.message(uuid) }));
});

/**
 * A delivered message's entry on a watch shard, just past: the shard's next window is not empty,
 * so a run that handles it moves the shard's mark (a run leaves the mark of an empty window).
 */
async function settledEntryIn(shard: number): Promise<void> {
  const uuid = await putTestMessage({ account, domain, to: ['settled@example.net'] });
  leftovers.push(uuid);
  assert.ok(await forceStatus(uuid, 'delivered', 'queued'));
  await watchAt(uuid, Date.now() - 1_000, shard);
}

async function markOf(shard: number): Promise<number | undefined> {
  const result = await dynamo().send(
    new GetCommand({ TableName: tableName(), Key: keys.dispatchMark(shard), ConsistentRead: true }),
  );
  return result.Item?.at as number | undefined;
}

/** A queued message nobody enqueued (the enqueue after its write failed), watched now. */
const stranded = (to: string) => putTestMessage({ account, domain, to: [to], dueAtMs: Date.now() - 1_000 });

const details = (message: { history: Array<{ detail?: string }> }, pattern: RegExp) =>
  message.history.filter((entry) => pattern.test(entry.detail ?? '')).length;

describe('watch entries and the dispatcher', () => {
  test('an unclaimed queued message is queued again when its entry comes up, and its entry moves ahead', async () => {
    const uuid = await stranded('unclaimed@example.net');
    const before = await rawItem(uuid);
    assert.match(String(before?.gsi3pk), /^WATCH#\d+$/);
    assert.match(String(before?.gsi2pk), new RegExp(`^STATUS#${account}#accepted#[0-3]$`));
    const runAt = Date.now();
    await dispatchDue(runAt);
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'delivered');
    assert.equal(details(message, /no sender had claimed it/), 1);
    assert.equal(smtpTransactions(uuid).length, 1);
    // Moved ahead when it was queued again, and left there when it settled.
    const after = await rawItem(uuid);
    assert.ok(workEntryTimeOf(after) > runAt - 60_000 && workEntryTimeOf(after) > workEntryTimeOf(before));
    assert.equal(after?.gsi3pk, before?.gsi3pk);
  });

  test('a processing message whose sender died (lease expired) is taken over once its entry comes up', async () => {
    const uuid = await putTestMessage({
      account,
      domain,
      to: ['orphan@example.net'],
      status: 'processing',
      leaseUntil: Date.now() - 1_000,
      dueAtMs: Date.now() - 1_000,
    });
    await dispatchDue();
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'delivered');
    assert.equal(details(message, /lease of the previous attempt expired/), 1);
    assert.equal(smtpTransactions(uuid).length, 1);
  });

  test("a settled message's entry is passed over: no write at all", async () => {
    const uuid = await putTestMessage({ account, domain, to: ['done@example.net'] });
    assert.ok(await forceStatus(uuid, 'delivered', 'queued'));
    await watchAt(uuid, Date.now() - 1_000);
    const before = await rawItem(uuid);
    assert.match(String(before?.gsi3pk), /^WATCH#\d+$/, 'the entry stays when the message settles');
    const report = await dispatchDue();
    assert.ok(report.watched >= 1);
    assert.deepEqual(await rawItem(uuid), before);
  });

  test('an in-flight message not due yet is re-armed to when it will be, with nothing else written', async () => {
    // Queued, its re-enqueue time an hour ahead: looked at again at the end of a lease taken now.
    const queued = await putTestMessage({
      account,
      domain,
      to: ['later@example.net'],
      dueAtMs: Date.now() + 3_600_000,
    });
    leftovers.push(queued);
    // Claimed by a sender (a live lease, no due time): looked at again when the lease ends.
    const processing = await putTestMessage({ account, domain, to: ['busy@example.net'] });
    leftovers.push(processing);
    const claimed = await claimMessage((await getDeliveryMessage(processing)) as DeliveryMessage, {
      from: 'queued',
      nowMs: Date.now(),
      leaseMs: 90_000,
    });
    const leaseUntil = claimed?.lease_until as number;
    const runAt = Date.now();
    for (const uuid of [queued, processing]) await watchAt(uuid, runAt - 1_000);
    const before = await Promise.all([queued, processing].map(rawItem));
    await dispatchDue(runAt);
    const after = await Promise.all([queued, processing].map(rawItem));
    const queuedAt = workEntryTimeOf(after[0]);
    assert.ok(
      queuedAt > runAt && queuedAt <= Date.now() + deliverySettings.leaseMs,
      `${queuedAt - runAt} ms`,
    );
    assert.equal(workEntryTimeOf(after[1]), leaseUntil);
    for (const [index, item] of after.entries()) {
      const { gsi3sk: _moved, ...rest } = item ?? {};
      const { gsi3sk: _was, ...restBefore } = before[index] ?? {};
      assert.deepEqual(rest, restBefore, 'the state, status and times are untouched');
    }
  });

  test('an entry that lands behind the mark, within the lag, is still read; one behind the window is not', async () => {
    // A write that lands after its watch time (a slow write, another host's clock): the next run's
    // window starts `watchLagMs` before the mark, which is never later than that run's start.
    const late = await stranded('late@example.net');
    await watchAt(late, Date.now() - watchLagMs / 2);
    await dispatchDue();
    const message = await waitForMessage(late, isSettled);
    assert.equal(details(message, /no sender had claimed it/), 1);

    // Every run from now on starts its window after `runAt − watchLagMs` on the shard whose mark
    // this run moves to `runAt`: an entry before that is never read again (the dispatcher does not
    // re-read the past). Written with its watch time ahead, then moved behind: a run reading it
    // would re-arm it.
    const behind = await putTestMessage({
      account,
      domain,
      to: ['behind@example.net'],
      dueAtMs: Date.now() + 3_600_000,
    });
    leftovers.push(behind);
    await settledEntryIn(workShardOf(behind));
    const runAt = Date.now();
    const report = await dispatchDue(runAt);
    assert.equal(report.errors, 0);
    assert.ok(((await markOf(workShardOf(behind))) ?? 0) >= runAt);
    await watchAt(behind, runAt - watchLagMs - 1_000);
    const before = await rawItem(behind);
    await dispatchDue();
    assert.deepEqual(await rawItem(behind), before);
  });

  test('an entry that cannot be handled is put a lease ahead, with an error, and its shard moves on', async () => {
    const good = await stranded('neighbour@example.net');
    const shard = workShardOf(good);
    // An item of the same shard whose state cannot be decoded. (Without an account: the table
    // stream's consumers pass over an item that is not a message of an account, so this one does
    // not hold up the shared host's webhooks, which fail on a corrupt state, and are retried.)
    let poison = randomUUID();
    while (workShardOf(poison) !== shard) poison = randomUUID();
    const poisonAt = Date.now() - 1_000;
    await dynamo().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.message(poison),
          message_uuid: poison,
          status: 'queued',
          created_at: new Date().toISOString(),
          st: new Uint8Array([1, 2, 3, 4]),
          gsi3pk: keys.watch(shard),
          gsi3sk: `${dueAtIso(poisonAt)}#${poison}`,
        },
      }),
    );
    leftovers.push(poison);
    const runAt = Date.now();
    const report = await dispatchDue(runAt);
    // Put ahead by this run, or by the host's own: either way a lease ahead of when it was read.
    const deferred = (
      await dynamo().send(
        new GetCommand({ TableName: tableName(), Key: keys.message(poison), ConsistentRead: true }),
      )
    ).Item;
    // This run reports the error, unless the host's own run met the entry between its write and
    // this run's read of the shard (it was then no longer due here, and already put ahead).
    assert.ok(
      report.errors >= 1 || workEntryTimeOf(deferred) >= poisonAt + deliverySettings.leaseMs,
      `errors ${report.errors}`,
    );
    assert.equal(deferred?.gsi3pk, keys.watch(shard));
    assert.ok(
      workEntryTimeOf(deferred) >= runAt + deliverySettings.leaseMs - 1_000,
      `${workEntryTimeOf(deferred) - runAt} ms ahead`,
    );
    assert.ok(((await markOf(shard)) ?? 0) >= runAt, 'the shard is not held back by it');
    const message = await waitForMessage(good, isSettled);
    assert.equal(details(message, /no sender had claimed it/), 1);
  });

  test('a run that re-arms an entry long after its start writes a watch time ahead of the write, not of its start', async () => {
    // A run that started 30 s ago (a long run, or one that overlapped the next): what it re-arms
    // must still come up in the windows of the runs after it.
    const runAt = Date.now() - 30_000;
    const uuid = await putTestMessage({
      account,
      domain,
      to: ['slow-run@example.net'],
      status: 'processing',
      // Live when the run started, so the plan re-arms it to the lease's end: 28 s ago.
      leaseUntil: runAt + 2_000,
      dueAtMs: runAt + 2_000,
    });
    const shard = workShardOf(uuid);
    await watchAt(uuid, runAt - 1_000);
    // No mark: the run reads the shard from its start, as a first run does.
    await dynamo().send(new DeleteCommand({ TableName: tableName(), Key: keys.dispatchMark(shard) }));
    const before = Date.now();
    const report = await dispatchDue(runAt);
    assert.ok(report.rearmed >= 1);
    const after = await rawItem(uuid);
    assert.ok(
      workEntryTimeOf(after) >= before + watchLagMs,
      `watched ${workEntryTimeOf(after) - before} ms after the write`,
    );
    // Settled here, so that no run takes over its long-expired lease.
    assert.ok(await forceStatus(uuid, 'delivered', 'processing'));
  });

  test('a shard a run cannot finish is not marked done: the next run goes on from where it got', async () => {
    const shard = workShardOf(randomUUID());
    await settledEntryIn(shard);
    await settledEntryIn(shard);
    // A run that reads one entry of each shard (a run out of pages, or of time, on a long backlog)
    // records how far it got, not its start. (Runs use the real time: a run ahead of the clock would
    // act early on the shared host's other messages, as a host with a fast clock would.)
    const runAt = Date.now();
    await dispatchDue(runAt, { pageSize: 1, maxPages: 1 });
    assert.notEqual(await markOf(shard), runAt, 'the shard was left unfinished');
    const again = Date.now();
    await dispatchDue(again);
    assert.ok(((await markOf(shard)) ?? 0) >= again);
  });

  test('a processing message whose lease expired with no attempts left is failed, not sent again', async () => {
    const uuid = await putTestMessage({
      account,
      domain,
      to: ['tired@example.net', 'also-tired@example.net'],
      status: 'processing',
      attempts: deliverySettings.maxAttempts,
      leaseUntil: Date.now() - 1_000,
      dueAtMs: Date.now() - 1_000,
    });
    await dispatchDue();
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'failed');
    const reason = `Sending did not complete after ${deliverySettings.maxAttempts} attempts`;
    assert.deepEqual(
      message.recipients.map((recipient) => [recipient.status, recipient.detail]),
      [
        ['failed', reason],
        ['failed', reason],
      ],
    );
    assert.equal(details(message, /did not complete after/), 1);
    assert.equal(smtpTransactions(uuid).length, 0);
    const item = await rawItem(uuid);
    assert.equal(item?.lease_until, undefined);
    assert.equal(item?.gsi2pk.split('#').slice(0, 3).join('#'), `STATUS#${account}#failed`);
  });

  test('a message held by manual-wait past the longest hold is failed through its due entry', async () => {
    const heldUntil = Date.now() - 1_000;
    const uuid = await putTestMessage({
      account,
      domain,
      to: ['forgotten@example.net'],
      status: 'waiting',
      dueAtMs: heldUntil,
    });
    const before = await rawItem(uuid);
    assert.match(String(before?.gsi3pk), /^DUE#\d+$/);
    // Still held: the run acts only on what is due.
    const later = await putTestMessage({
      account,
      domain,
      to: ['held@example.net'],
      status: 'waiting',
      dueAtMs: Date.now() + 3_600_000,
    });
    leftovers.push(later);
    await dispatchDue();
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'failed');
    assert.equal(details(message, /held by manual-wait/), 1);
    assert.equal(message.recipients[0]?.status, 'failed');
    assert.equal(smtpTransactions(uuid).length, 0);
    assert.equal((await getDeliveryMessage(later))?.status, 'waiting');
  });

  test('a scheduled message whose send time is near is released: queued with a delay, watched from its send time, sent then', async () => {
    const sendAt = new Date(Date.now() + 3_000);
    const uuid = await putTestMessage({
      account,
      domain,
      to: ['on-time@example.net'],
      status: 'scheduled',
      sendAt,
    });
    assert.match(String((await rawItem(uuid))?.gsi3pk), /^DUE#\d+$/);
    await dispatchDue();
    const released = await rawItem(uuid);
    // Released by this run or by the host's own: either way it waits in the queue, not in the table.
    assert.ok(['queued', 'processing', 'sent', 'delivered'].includes(String(released?.status)));
    assert.match(String(released?.gsi3pk), /^WATCH#\d+$/);
    assert.ok(workEntryTimeOf(released) >= sendAt.getTime(), 'watched from its send time, not before');
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'delivered');
    assert.equal(details(message, /released by the scheduler/), 1);
    const sentAt = Date.parse(message.history.find((entry) => entry.status === 'processing')?.at ?? '');
    assert.ok(
      sentAt >= sendAt.getTime() - 1_000,
      `claimed ${sendAt.getTime() - sentAt} ms before its send time`,
    );
    assert.equal(smtpTransactions(uuid).length, 1);
  });

  test('overlapping runs queue a stranded message once', async () => {
    const uuid = await stranded('overlap@example.net');
    await Promise.all([dispatchDue(), dispatchDue(), dispatchDue()]);
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'delivered');
    assert.equal(details(message, /no sender had claimed it/), 1);
    assert.equal(smtpTransactions(uuid).length, 1);
  });

  test('a message on the in-flight index of earlier releases is moved to a watch entry and its lane, then recovered', async () => {
    // The layout an earlier release wrote: queued, on `INFLIGHT#<n>`, on no listing lane.
    const uuid = await stranded('legacy@example.net');
    const item = await rawItem(uuid);
    const legacyShard = workShardOf(uuid);
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.message(uuid),
        UpdateExpression: 'SET gsi3pk = :pk, gsi3sk = :sk REMOVE gsi2pk',
        ExpressionAttributeValues: {
          ':pk': keys.legacyInFlight(legacyShard),
          ':sk': `${account}#${item?.created_at}#${uuid}`,
        },
      }),
    );
    const hidden = await listMessages(account, { status: 'queued' }, undefined);
    assert.ok(!hidden.messages.some((message) => message.message_uuid === uuid));
    const adoptedBy = Date.now();
    await dispatchDue();
    // Watched at least the lag after the move (the entry of a run's own write is never behind a
    // window another run has begun); brought forward here, the next run queues it again.
    const adopted = await rawItem(uuid);
    assert.match(String(adopted?.gsi3pk), /^WATCH#\d+$/);
    assert.ok(workEntryTimeOf(adopted) >= adoptedBy + watchLagMs);
    await watchAt(uuid, Date.now() - 1_000);
    await dispatchDue();
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'delivered');
    assert.equal(details(message, /no sender had claimed it/), 1);
    const after = await rawItem(uuid);
    assert.match(String(after?.gsi3pk), /^WATCH#\d+$/);
    assert.equal(after?.gsi2pk.split('#').slice(0, 3).join('#'), `STATUS#${account}#${laneOf('delivered')}`);
    const listed = await listMessages(account, { status: 'delivered' }, undefined);
    assert.ok(listed.messages.some((listedMessage) => listedMessage.message_uuid === uuid));
  });
});
