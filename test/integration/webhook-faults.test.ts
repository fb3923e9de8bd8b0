import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { deliverWebhookBatch } from '../../functions/webhook-delivery/handler.ts';
import { handler as fanOut } from '../../functions/webhook-fanout/handler.ts';
import { startEventSource } from '../../infra/local/event-source.ts';
import { postTo } from '../../shared/webhooks/http-target.ts';
import { call, useHostEnvironment } from '../support/host.ts';
import { newAccount, type TestAccount } from '../support/messages.ts';
import { undecodableMessageRecord } from '../support/stream-records.ts';
import { jobsFor, storeTestEvents } from '../support/webhook-events.ts';
import { startWebhookReceiver, verifiesByHand, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * No event is lost when the delivery function fails mid-batch. This file runs the real delivery
 * code against the host's stores, on a webhook queue of its own (visibility 1 s) read by the host's
 * SQS event-source loop, so a failed batch comes back within seconds instead of minutes.
 */
useHostEnvironment();
const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
let receiver: WebhookReceiver;
let who: TestAccount;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  who = await newAccount('whf');
  const name = `wh-faults-${randomUUID().slice(0, 8)}`;
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const dlqArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes?.QueueArn;
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: '1',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 5 }),
      },
    }),
  );
  process.env.WEBHOOK_QUEUE_URL = queue.QueueUrl as string;
  process.env.WEBHOOK_DEAD_LETTER_QUEUE_URL = dlq.QueueUrl as string;
});
afterAll(async () => {
  await receiver.close();
  sqs.destroy();
});

async function hookAndEvents(url: string, count: number) {
  const added = await call('POST', '/webhook/add-1.0', { token: who.token, body: { url } });
  assert.equal(added.status, 200, added.text);
  const { webhook_id: webhookId, secret } = added.body.data.webhook as { webhook_id: string; secret: string };
  const jobs = jobsFor(who.account, await storeTestEvents(who.account, count), [webhookId]);
  return { webhookId, secret, jobs };
}

describe('no event lost when the delivery function fails mid-batch', () => {
  it('a function that dies after delivering half its batch: the whole batch comes back, every event arrives', async () => {
    const path = '/crash';
    const { secret, jobs } = await hookAndEvents(`${receiver.url}${path}`, 6);
    let invocations = 0;
    const crashingOnce = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      invocations += 1;
      if (invocations === 1) {
        // Deliver the first half, then die before answering: nothing of this batch is acknowledged.
        await deliverWebhookBatch({ Records: event.Records.slice(0, Math.ceil(event.Records.length / 2)) });
        throw new Error('simulated crash mid-batch');
      }
      return deliverWebhookBatch(event);
    };
    const source = startEventSource({
      queueUrl: process.env.WEBHOOK_QUEUE_URL as string,
      handler: crashingOnce,
      batchSize: 10,
      waitTimeSeconds: 1,
    });
    try {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: process.env.WEBHOOK_QUEUE_URL,
          Entries: jobs.map((job, index) => ({ Id: String(index), MessageBody: JSON.stringify(job) })),
        }),
      );
      const wanted = new Set(jobs.map((job) => job.event_id));
      await receiver.waitFor((list) => {
        const seen = new Set(list.filter((r) => r.path === path).map((r) => String(r.headers['webhook-id'])));
        return [...wanted].every((id) => seen.has(id));
      });
      assert.ok(invocations >= 2, 'the batch was handed over again');
      for (const request of receiver.received.filter((r) => r.path === path))
        assert.ok(verifiesByHand(secret, request));
    } finally {
      await source.stop();
    }
  });

  it('one job failing reports only itself in batchItemFailures; it succeeds when handed over again', async () => {
    const path = '/partial';
    const { jobs } = await hookAndEvents(`${receiver.url}${path}`, 3);
    const records = jobs.map((job, index) => ({
      messageId: `m-${index}`,
      receiptHandle: `r-${index}`,
      body: JSON.stringify(job),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:webhooks',
      awsRegion: 'us-east-1',
    }));
    let calls = 0;
    // The second job's processing crashes (an unexpected error inside the function, not an answer).
    const flaky: typeof postTo = async (...args) => {
      calls += 1;
      if (calls === 2) throw new Error('crashed while posting');
      return postTo(...args);
    };
    const result = await deliverWebhookBatch({ Records: records }, { post: flaky });
    assert.equal(result.batchItemFailures.length, 1);
    const failedId = result.batchItemFailures[0]?.itemIdentifier;
    const failed = records.find((record) => record.messageId === failedId);
    assert.ok(failed);
    const delivered = () =>
      new Set(receiver.received.filter((r) => r.path === path).map((r) => r.headers['webhook-id']));
    assert.equal(delivered().size, 2);
    const again = await deliverWebhookBatch({ Records: [failed] });
    assert.deepEqual(again.batchItemFailures, []);
    assert.deepEqual([...delivered()].sort(), jobs.map((job) => job.event_id).sort());
  });
});

describe('the fan-out and a change it cannot read', () => {
  it('a message image that cannot be decoded is left out, not retried for ever (it would hold the shard back)', async () => {
    // The account has an endpoint, so the fan-out does read the change.
    await hookAndEvents(`${receiver.url}/undecodable`, 0);
    const corrupt = undecodableMessageRecord(who.account, randomUUID(), 'MODIFY', '7');
    assert.deepEqual(await fanOut({ Records: [corrupt] }), { batchItemFailures: [] });
  });
});
