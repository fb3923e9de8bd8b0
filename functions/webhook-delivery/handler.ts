import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { observedWorker } from '#shared/observability/powertools.ts';
import { processWebhookBatch } from '#shared/services/webhooks/delivery.ts';

/** The webhook queue's consumer (SQS event source, ReportBatchItemFailures): one signed POST per job. */
export const handler = observedWorker(
  async (event: SQSEvent): Promise<SQSBatchResponse> => processWebhookBatch(event),
);
