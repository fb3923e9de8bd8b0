import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { observedWorker } from '#shared/platform/observability/powertools.ts';
import { processWebhookBatch } from '#shared/webhooks/delivery.ts';

/**
 * The webhook queue's consumer (SQS event source, ReportBatchItemFailures): one signed POST per job.
 * A job that could not finish before the invocation's end waits for a later invocation.
 */
export const handler = observedWorker(
  async (event: SQSEvent, context): Promise<SQSBatchResponse> =>
    processWebhookBatch(
      event,
      typeof context?.getRemainingTimeInMillis === 'function'
        ? { deadline: Date.now() + context.getRemainingTimeInMillis() }
        : {},
    ),
);
