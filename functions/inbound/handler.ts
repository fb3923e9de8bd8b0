import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processInboundBatch } from '#shared/inbound/receive.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/**
 * The inbound queue's consumer (SQS event source, ReportBatchItemFailures): each entry is SES's
 * receipt of one stored message; it is parsed and stored for its domain's account. A failed entry
 * is redelivered, and kept in the dead-letter queue after its last attempt.
 */
export const handler = observedWorker(
  async (event: SQSEvent): Promise<SQSBatchResponse> => processInboundBatch(event),
);
