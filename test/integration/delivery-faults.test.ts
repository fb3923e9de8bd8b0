import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'vitest';
import { handler as sender } from '../../functions/sender/handler.ts';
import { claimMessage, getDeliveryMessage } from '../../shared/delivery/store/message-delivery.ts';
import { registerDomain } from '../../shared/domains/registry.ts';
import { enqueueSend } from '../../shared/messages/store/send-queue.ts';
import {
  isSettled,
  outboxEml,
  putTestMessage,
  runDispatcher,
  smtpTransactions,
  waitForMessage,
} from '../support/delivery.ts';
import { call, mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';
import { sqsRecord } from '../support/sqs-record.ts';

useHostEnvironment();

async function arrange(): Promise<{ account: string; domain: string }> {
  const account = uniqueAccount('flt');
  const domain = uniqueDomain('flt');
  await registerDomain(domain, account);
  return { account, domain };
}

describe('delivery under faults', () => {
  test('the same SQS message delivered twice, at once and again later, is one SMTP transaction', async () => {
    const { account, domain } = await arrange();
    const uuid = await putTestMessage({ account, domain, to: ['twice@example.net'] });
    const messageId = randomUUID();
    // Two deliveries of one queue message, handled concurrently (at-least-once delivery).
    const [first, second] = await Promise.all([
      sender({ Records: [sqsRecord(uuid, { messageId, receiveCount: 1 })] }),
      sender({ Records: [sqsRecord(uuid, { messageId, receiveCount: 1 })] }),
    ]);
    const message = await getDeliveryMessage(uuid);
    assert.equal(message?.status, 'delivered');
    assert.equal(smtpTransactions(uuid).length, 1);
    // The loser either saw the live lease (left for redelivery) or the finished message (done).
    const failures = [...first.batchItemFailures, ...second.batchItemFailures];
    assert.ok(failures.length <= 1);
    // Its redelivery, and two more copies through the real queue, change nothing.
    const again = await sender({ Records: [sqsRecord(uuid, { messageId, receiveCount: 2 })] });
    assert.deepEqual(again.batchItemFailures, []);
    await enqueueSend(uuid, account);
    await enqueueSend(uuid, account);
    const marker = await putTestMessage({ account, domain, to: ['marker@example.net'] });
    await enqueueSend(marker, account);
    await waitForMessage(marker, isSettled);
    assert.equal(smtpTransactions(uuid).length, 1);
    assert.equal((await getDeliveryMessage(uuid))?.attempts, 1);
  });

  test('a sender killed between claim and send: the lease expires, the message is sent once', async () => {
    const { account, domain } = await arrange();
    // Watched 5 s from now: when the short lease below ends (the service watches a message it
    // queues at the end of a lease taken at once, SEND_LEASE_SECONDS, 120 s by default).
    const uuid = await putTestMessage({
      account,
      domain,
      to: ['patient@example.net'],
      dueAtMs: Date.now() + 5_000,
    });
    const current = await getDeliveryMessage(uuid);
    assert.ok(current);
    // A sender claims with a short lease, then dies before sending anything.
    const claimed = await claimMessage(current, { from: 'queued', nowMs: Date.now(), leaseMs: 5_000 });
    assert.equal(claimed?.status, 'processing');
    // A redelivery while the lease holds is left for later, not sent.
    const early = await sender({ Records: [sqsRecord(uuid, { receiveCount: 2 })] });
    assert.equal(early.batchItemFailures.length, 1);
    assert.equal(smtpTransactions(uuid).length, 0);

    while (Date.now() <= (claimed?.lease_until ?? 0))
      await new Promise((resolve) => setTimeout(resolve, 100));
    await runDispatcher();
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'delivered');
    assert.equal(smtpTransactions(uuid).length, 1);
    assert.equal(message.attempts, 2);
    assert.ok(
      message.history.some((entry) => /lease of the previous attempt expired/.test(entry.detail ?? '')),
    );
    assert.match(outboxEml(uuid)?.toString() ?? '', /^DKIM-Signature: /m);
  });

  test('a failure between the write and the queue loses nothing: the reconciler sends it', async () => {
    const { account, domain } = await arrange();
    // Written as `queued`, but the enqueue never happened; its reconcile time has passed.
    const uuid = await putTestMessage({
      account,
      domain,
      to: ['stranded@example.net'],
      dueAtMs: Date.now() - 1_000,
    });
    assert.equal(smtpTransactions(uuid).length, 0);
    await runDispatcher();
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'delivered');
    assert.equal(smtpTransactions(uuid).length, 1);
    assert.ok(message.history.some((entry) => /no sender had claimed it/.test(entry.detail ?? '')));
  });

  test('a message cancelled or deleted before the claim is skipped: acknowledged, never sent', async () => {
    const { account, domain } = await arrange();
    const token = await mintToken({ account });
    const cancelled = await putTestMessage({ account, domain, to: ['never@example.net'] });
    const deleted = await putTestMessage({ account, domain, to: ['never@example.net'] });
    const cancel = await call('POST', '/message/add-1.0', {
      token,
      body: {
        message_sender: `sender@${domain}`,
        scheduling: { mode: 'manual-cancel', message_uuid: cancelled },
      },
    });
    assert.equal(cancel.body.data?.status, 'cancelled', cancel.text);
    const removal = await call('POST', '/message/delete-1.0', { token, body: { message_uuids: [deleted] } });
    assert.deepEqual(removal.body.data?.deleted, [deleted], removal.text);

    const result = await sender({
      Records: [sqsRecord(cancelled), sqsRecord(deleted)],
    });
    assert.deepEqual(result.batchItemFailures, []);
    assert.equal((await getDeliveryMessage(cancelled))?.status, 'cancelled');
    assert.equal(await getDeliveryMessage(deleted), undefined);
    assert.equal(smtpTransactions(cancelled).length + smtpTransactions(deleted).length, 0);
  });

  test('a message whose stored content is gone fails for good with the reason', async () => {
    const { account, domain } = await arrange();
    const uuid = await putTestMessage({ account, domain, to: ['x@example.net'], withoutParts: true });
    await enqueueSend(uuid, account);
    const message = await waitForMessage(uuid, isSettled);
    assert.equal(message.status, 'failed');
    assert.match(message.history.at(-1)?.detail ?? '', /Stored content is missing/);
    assert.equal(message.recipients[0]?.status, 'failed');
    assert.equal(smtpTransactions(uuid).length, 0);
  });
});
