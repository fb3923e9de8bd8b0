import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { messageGroupOf } from '../../platform/aws/fair-queue.ts';
import { guarded } from '../../platform/aws/faults.ts';
import { sqs } from '../../platform/aws/sqs.ts';
import { mapLimit } from '../../platform/concurrency/map-limit.ts';
import { queueUrl } from '../../platform/config/storage.ts';

/**
 * The send queue: one entry `{"message_uuid"}` per message to send, with the message's account as
 * its fair-queue group (shared/platform/aws/fair-queue.ts). Every producer builds its entries here, single
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

/**
 * Puts many messages of one account on the send queue: SendMessageBatch, 10 a request (SQS's
 * limit), 8 requests at a time. Returns the uuids SQS did not take (the caller logs them; the
 * dispatcher re-enqueues them through their watch entries once their due time has passed).
 */
export async function enqueueManySends(uuids: readonly string[], accountId: string): Promise<string[]> {
  const chunks: string[][] = [];
  for (let start = 0; start < uuids.length; start += 10) chunks.push(uuids.slice(start, start + 10));
  const failed: string[] = [];
  await mapLimit(chunks, 8, async (chunk) => {
    try {
      const result = await guarded('queue', () =>
        sqs().send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl(),
            Entries: chunk.map((uuid, index) => ({ Id: String(index), ...sendQueueEntry(uuid, accountId) })),
          }),
        ),
      );
      for (const entry of result.Failed ?? []) failed.push(chunk[Number(entry.Id)] as string);
    } catch {
      failed.push(...chunk);
    }
  });
  return failed;
}
