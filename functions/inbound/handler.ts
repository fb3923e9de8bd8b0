import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseReceipt } from '#shared/inbound/model/receipt.ts';
import { receiveMessage } from '#shared/inbound/receive.ts';
import { processPartialBatch } from '#shared/platform/lambda/partial-batch.ts';
import { log } from '#shared/platform/observability/log.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/**
 * The inbound queue's consumer (SQS event source, ReportBatchItemFailures): each entry is SES's
 * receipt of one stored message; it is parsed and stored for its domain's account. An entry that
 * is not a receipt is logged and acknowledged; a failed one is redelivered, and kept in the
 * dead-letter queue after its last attempt. One at a time: each message may be up to 40 MB, and
 * memory is sized for one.
 */
export const handler = observedWorker(
  async (event: SQSEvent): Promise<SQSBatchResponse> =>
    processPartialBatch(
      event.Records,
      async (record) => {
        const parsed = parseReceipt(record.body);
        if (!parsed.ok) {
          log('info', 'inbound queue entry ignored', {
            sqs_message_id: record.messageId,
            reason: parsed.reason,
          });
          return;
        }
        await receiveMessage(parsed.receipt);
      },
      {
        idOf: (record) => record.messageId,
        order: 'in-order',
        failureLog: {
          level: 'error',
          message: 'inbound message not stored; the queue will retry',
          fields: (record) => ({ sqs_message_id: record.messageId }),
        },
      },
    ),
);
