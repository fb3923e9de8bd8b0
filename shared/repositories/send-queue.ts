import { type SendMessageBatchRequestEntry, SendMessageCommand } from '@aws-sdk/client-sqs';
import { messageGroupOf } from '../aws/fair-queue.ts';
import { guarded } from '../aws/faults.ts';
import { sqs } from '../aws/sqs.ts';
import { queueUrl } from '../config/storage.ts';

/**
 * The send queue: one entry `{"message_uuid"}` per message to send, with the message's account as
 * its fair-queue group (shared/aws/fair-queue.ts). Every producer builds its entries here, single
 * sends and batches alike, so no entry goes out without its group.
 */
export function sendQueueEntry(
  messageUuid: string,
  accountId: string,
  delaySeconds = 0,
): Omit<SendMessageBatchRequestEntry, 'Id'> {
  return {
    MessageBody: JSON.stringify({ message_uuid: messageUuid }),
    MessageGroupId: messageGroupOf(accountId),
    DelaySeconds: Math.max(0, Math.min(900, Math.round(delaySeconds))),
  };
}

/** Puts one message on the send queue, optionally delayed (0–900 s). */
export async function enqueueSend(messageUuid: string, accountId: string, delaySeconds = 0): Promise<void> {
  await guarded('queue', () =>
    sqs().send(
      new SendMessageCommand({
        QueueUrl: queueUrl(),
        ...sendQueueEntry(messageUuid, accountId, delaySeconds),
      }),
    ),
  );
}
