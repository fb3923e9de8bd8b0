import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';

/** One send-queue record for a message, as Lambda's event source mapping hands it to the sender. */
export function sqsRecord(
  uuid: string,
  { messageId = randomUUID(), receiveCount = 1 }: { messageId?: string; receiveCount?: number } = {},
): SQSEvent['Records'][number] {
  return {
    messageId,
    receiptHandle: `handle-${messageId}-${receiveCount}`,
    body: JSON.stringify({ message_uuid: uuid }),
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: String(Date.now()),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:svc-mail-send',
    awsRegion: 'us-east-1',
  };
}
