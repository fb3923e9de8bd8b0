import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { observedWorker } from '#shared/observability/powertools.ts';
import { sendQueuedMessage } from '#shared/services/delivery/send-message.ts';
import { processSendQueueBatch } from '#shared/services/delivery/sqs-batch.ts';

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
