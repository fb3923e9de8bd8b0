import assert from 'node:assert/strict';
import {
  CreateQueueCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, describe, it } from 'vitest';
import { useHostEnvironment } from '../support/host.ts';

useHostEnvironment();

/**
 * The local queue emulator receives like an SQS fair queue (a standard queue whose messages carry a
 * MessageGroupId): the group with the fewest messages in flight comes first, so one group's backlog
 * does not hold another group's message. Messages without a group keep arrival order.
 */
const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
afterAll(() => sqs.destroy());

async function newQueue(name: string): Promise<string> {
  const suffix = Math.random().toString(36).slice(2, 8);
  const created = await sqs.send(
    new CreateQueueCommand({ QueueName: `${name}-${suffix}`, Attributes: { VisibilityTimeout: '300' } }),
  );
  return created.QueueUrl as string;
}

async function sendAll(queueUrl: string, bodies: string[], group?: string): Promise<void> {
  for (let start = 0; start < bodies.length; start += 10) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: bodies.slice(start, start + 10).map((body, index) => ({
          Id: String(index),
          MessageBody: body,
          ...(group === undefined ? {} : { MessageGroupId: group }),
        })),
      }),
    );
  }
}

async function receive(queueUrl: string, max: number): Promise<Message[]> {
  const received = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['MessageGroupId'],
    }),
  );
  return received.Messages ?? [];
}

const numbered = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${prefix}${index}`);

describe('fair receive on the local queue emulator', () => {
  it("one group's backlog does not hold another group's message: it comes out in the first receive", async () => {
    const queueUrl = await newQueue('fair-backlog');
    await sendAll(queueUrl, numbered('a', 500), 'tenant-a');
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'b0', MessageGroupId: 'tenant-b' }),
    );

    const first = await receive(queueUrl, 10);
    assert.equal(first.length, 10);
    assert.ok(
      first.some((message) => message.Body === 'b0'),
      `B's message is not in the first receive: ${first.map((message) => message.Body).join(', ')}`,
    );
    assert.equal(first.find((message) => message.Body === 'b0')?.Attributes?.MessageGroupId, 'tenant-b');
    // A's messages still come oldest first.
    assert.deepEqual(
      first.filter((message) => message.Body !== 'b0').map((message) => message.Body),
      numbered('a', 9),
    );
  });

  it('the group with the fewest messages in flight goes first', async () => {
    const queueUrl = await newQueue('fair-inflight');
    await sendAll(queueUrl, numbered('a', 100), 'tenant-a');
    const inFlightOfA = [...(await receive(queueUrl, 10)), ...(await receive(queueUrl, 10))];
    assert.equal(inFlightOfA.length, 20);
    await sendAll(queueUrl, numbered('c', 2), 'tenant-c');
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'b0', MessageGroupId: 'tenant-b' }),
    );

    // A has 20 in flight, C and B none: C's two and B's come before A's next, C's oldest first,
    // and B's (nothing in flight) before C's second (one in flight by then).
    const next = await receive(queueUrl, 4);
    assert.deepEqual(
      next.map((message) => message.Body),
      ['c0', 'b0', 'c1', 'a20'],
    );
  });

  it('messages without a group keep arrival order', async () => {
    const queueUrl = await newQueue('fair-ungrouped');
    await sendAll(queueUrl, numbered('m', 30));
    const received: string[] = [];
    for (let round = 0; round < 3; round++)
      received.push(...(await receive(queueUrl, 10)).map((message) => message.Body as string));
    assert.deepEqual(received, numbered('m', 30));
  });
});
