import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { sendQueuedMessage } from '#shared/delivery/send-message.ts';
import { processSendQueueBatch } from '#shared/platform/aws/sqs-batch.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/**
 * The send queue's consumer (SQS event source, ReportBatchItemFailures). Each entry names one
 * message; a transient failure leaves only that entry for redelivery.
 */
export const handler = observedWorker(
  async (event: SQSEvent): Promise<SQSBatchResponse> =>
    processSendQueueBatch(event, async (messageUuid) => {
      const outcome = await sendQueuedMessage(messageUuid);
      return outcome.result === 'retry' ? 'retry' : 'ok';
    }),
);
