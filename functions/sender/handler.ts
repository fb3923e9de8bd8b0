import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { queuedMessageUuidOf } from '#shared/delivery/model/send-job.ts';
import { sendQueuedMessage } from '#shared/delivery/send-message.ts';
import { processPartialBatch } from '#shared/platform/lambda/partial-batch.ts';
import { log } from '#shared/platform/observability/log.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/**
 * The send queue's consumer (SQS event source, ReportBatchItemFailures). Each entry names one
 * message; the batch's entries run at once, and a transient failure leaves only that entry for
 * redelivery. An entry that names no message can never succeed: it is logged and acknowledged.
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
        const outcome = await sendQueuedMessage(messageUuid);
        return outcome.result === 'retry' ? 'retry' : undefined;
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
