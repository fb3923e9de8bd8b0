import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { observedWorker } from '#shared/platform/observability/powertools.ts';
import { fanOutStreamBatch } from '#shared/webhooks/fanout.ts';

/**
 * The table stream's consumer (event source mapping with ReportBatchItemFailures; locally the
 * host's stream poller): message changes → webhook events → one queue job per endpoint.
 */
export const handler = observedWorker(
  async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => fanOutStreamBatch(event),
);
