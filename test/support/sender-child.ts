import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';

/**
 * A sender function instance in its own process, so a test can kill it mid-batch (SIGKILL, as when
 * Lambda's sandbox dies). Runs the real handler on one SQS batch of the uuids given as arguments,
 * with the environment it inherits (the test host's stores, the SMTP_URL the test chose).
 */
const uuids = process.argv.slice(2);
const { handler } = await import('../../functions/sender/handler.ts');
const event: SQSEvent = {
  Records: uuids.map((uuid) => ({
    messageId: randomUUID(),
    receiptHandle: `handle-${uuid}`,
    body: JSON.stringify({ message_uuid: uuid }),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:svc-mail-send',
    awsRegion: 'us-east-1',
  })),
};
const result = await handler(event);
process.stdout.write(`${JSON.stringify(result)}\n`);
