import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { failDeadLetter } from '#shared/delivery/dead-letter.ts';
import { processSendQueueBatch, receiveCountOf } from '#shared/platform/aws/sqs-batch.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/** The dead-letter queue's consumer: messages the send queue gave up on become `failed`. */
export const handler = observedWorker(
  async (event: SQSEvent): Promise<SQSBatchResponse> =>
    processSendQueueBatch(event, async (messageUuid, record) => {
      await failDeadLetter(messageUuid, receiveCountOf(record));
      return 'ok';
    }),
);
