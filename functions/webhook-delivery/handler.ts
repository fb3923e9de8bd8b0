import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processPartialBatch } from '#shared/platform/lambda/partial-batch.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';
import { type DeliveryDependencies, deliverWebhookJob, endpointOfJob } from '#shared/webhooks/post-event.ts';

/**
 * One batch of the webhook queue: each endpoint's jobs one after another (one attempt per endpoint
 * at a time), the endpoints side by side; a job that throws is handed over again on its own.
 * `deps` as in shared/webhooks/post-event.ts (tests inject the HTTP call there).
 */
export function deliverWebhookBatch(
  event: SQSEvent,
  deps: DeliveryDependencies = {},
): Promise<SQSBatchResponse> {
  return processPartialBatch(event.Records, (record) => deliverWebhookJob(record.body, deps), {
    idOf: (record) => record.messageId,
    order: (record) => endpointOfJob(record.body) ?? `malformed:${record.messageId}`,
    failureLog: {
      level: 'warn',
      message: 'webhook job failed; it will be retried',
      fields: (record) => ({ message_id: record.messageId }),
    },
  });
}

/**
 * The webhook queue's consumer (SQS event source, ReportBatchItemFailures): one signed POST per job.
 * A job that could not finish before the invocation's end waits for a later invocation.
 */
export const handler = observedWorker(
  async (event: SQSEvent, context): Promise<SQSBatchResponse> =>
    deliverWebhookBatch(
      event,
      typeof context?.getRemainingTimeInMillis === 'function'
        ? { deadline: Date.now() + context.getRemainingTimeInMillis() }
        : {},
    ),
);
