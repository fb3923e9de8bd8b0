import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { observedWorker } from '#shared/observability/powertools.ts';
import { failDeadLetter } from '#shared/services/delivery/dead-letter.ts';
import { processSendQueueBatch, receiveCountOf } from '#shared/services/delivery/sqs-batch.ts';

/** The dead-letter queue's consumer: messages the send queue gave up on become `failed`. */
export const handler = observedWorker(
  async (event: SQSEvent): Promise<SQSBatchResponse> =>
    processSendQueueBatch(event, async (messageUuid, record) => {
      await failDeadLetter(messageUuid, receiveCountOf(record));
      return 'ok';
    }),
);
