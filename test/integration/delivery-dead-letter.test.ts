import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { test } from 'vitest';
import { startEventSource } from '../../infra/local/event-source.ts';
import { registerDomain } from '../../shared/domains/registry.ts';
import { putTestMessage, queryMessage, smtpTransactions, waitForMessage } from '../support/delivery.ts';
import { mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

useHostEnvironment();

/** A port nothing listens on: the relay is down for this test process's sender. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 1;
}

test('a message that keeps failing lands in the dead-letter queue and becomes failed', async () => {
  // This process's sender talks to a relay that refuses connections: every attempt fails transiently.
  process.env.SMTP_URL = `smtp://127.0.0.1:${await closedPort()}`;
  process.env.SMTP_FINAL_HOP = 'false';
  const { handler: sender } = await import('../../functions/sender/handler.ts');
  const { handler: deadLetter } = await import('../../functions/dead-letter/handler.ts');

  // A queue pair of its own with a small maxReceiveCount and a one-second visibility timeout, so
  // the redrive happens within the test; the host's queues keep their production settings.
  const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
  const suffix = Math.random().toString(36).slice(2, 8);
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `dlq-test-${suffix}` }));
  const dlqArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes?.QueueArn;
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: `send-test-${suffix}`,
      Attributes: {
        VisibilityTimeout: '1',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
      },
    }),
  );
  const sources = [
    startEventSource({ queueUrl: queue.QueueUrl as string, handler: sender, waitTimeSeconds: 1 }),
    startEventSource({ queueUrl: dlq.QueueUrl as string, handler: deadLetter, waitTimeSeconds: 1 }),
  ];
  try {
    const account = uniqueAccount('dlq');
    const domain = uniqueDomain('dlq');
    // The sender checks at send time that the domain is the account's (docs/delivery.md).
    await registerDomain(domain, account);
    const uuid = await putTestMessage({ account, domain, to: ['unlucky@example.net'] });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.QueueUrl,
        MessageBody: JSON.stringify({ message_uuid: uuid }),
      }),
    );

    const message = await waitForMessage(uuid, (item) => item.status === 'failed');
    assert.equal(message.attempts, 2, 'one attempt per receive before the redrive');
    const failed = message.history.at(-1);
    assert.match(failed?.detail ?? '', /send queue gave up after 2 send attempts/);
    assert.match(failed?.detail ?? '', /Relay error/);
    assert.equal(message.recipients[0]?.status, 'failed');
    assert.equal(smtpTransactions(uuid).length, 0);

    // Visible through the API, like any other status.
    const viewed = await queryMessage(await mintToken({ account }), uuid);
    assert.equal(viewed.status, 'failed');
  } finally {
    await Promise.all(sources.map((source) => source.stop()));
    sqs.destroy();
  }
});
