import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { describeError, log } from '../observability/log.ts';

/**
 * Runs one SQS batch the way Lambda's event source mapping expects with ReportBatchItemFailures:
 * every record is handled (concurrently), and the ids of those to redeliver are returned. A body
 * that is not `{"message_uuid"}` can never succeed, so it is logged and acknowledged.
 */
export async function processSendQueueBatch(
  event: SQSEvent,
  handle: (messageUuid: string, record: SQSRecord) => Promise<'ok' | 'retry'>,
): Promise<SQSBatchResponse> {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      const messageUuid = messageUuidOf(record.body);
      if (messageUuid === undefined) {
        log('warn', 'queue entry without a message uuid dropped', { sqs_message_id: record.messageId });
        return;
      }
      try {
        if ((await handle(messageUuid, record)) === 'retry') {
          failures.push({ itemIdentifier: record.messageId });
        }
      } catch (error) {
        log('error', 'queue entry failed', { message_uuid: messageUuid, ...describeError(error) });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
}

function messageUuidOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { message_uuid?: unknown };
    return typeof parsed.message_uuid === 'string' && parsed.message_uuid.length > 0
      ? parsed.message_uuid
      : undefined;
  } catch {
    return undefined;
  }
}

export function receiveCountOf(record: SQSRecord): number | undefined {
  const count = Number(record.attributes?.ApproximateReceiveCount);
  return Number.isFinite(count) && count > 0 ? count : undefined;
}
