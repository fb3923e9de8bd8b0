import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { failDeadLetter } from '#shared/delivery/dead-letter.ts';
import { queuedMessageUuidOf } from '#shared/delivery/model/send-job.ts';
import { processPartialBatch } from '#shared/platform/lambda/partial-batch.ts';
import { log } from '#shared/platform/observability/log.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/**
 * The dead-letter queue's consumer: messages the send queue gave up on become `failed`. The
 * batch's entries run at once; an entry that names no message is logged and acknowledged.
 */
export const handler = observedWorker(
  async (event: SQSEvent): Promise<SQSBatchResponse> =>
    processPartialBatch(
      event.Records,
      async (record) => {
        const messageUuid = queuedMessageUuidOf(record.body);
        if (messageUuid === undefined) {
          log('warn', 'queue entry without a message uuid dropped', { sqs_message_id: record.messageId });
          return;
        }
        await failDeadLetter(messageUuid, receiveCountOf(record));
      },
      {
        idOf: (record) => record.messageId,
        failureLog: {
          level: 'error',
          message: 'queue entry failed',
          fields: (record) => ({ message_uuid: queuedMessageUuidOf(record.body) }),
        },
      },
    ),
);

/** How many times the send queue handed the entry out before giving up on it. */
function receiveCountOf(record: SQSRecord): number | undefined {
  const count = Number(record.attributes?.ApproximateReceiveCount);
  return Number.isFinite(count) && count > 0 ? count : undefined;
}
