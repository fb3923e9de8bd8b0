import { log } from '../platform/observability/log.ts';
import { countMessages } from '../platform/observability/metrics.ts';
import { getDeliveryMessage, markFailed } from './store/message-delivery.ts';

/**
 * A queue entry the send queue gave up on (maxReceiveCount reached): the message becomes `failed`
 * with the reason, visible in the query. A message that moved on meanwhile (sent by a later
 * attempt, cancelled, deleted, held under a live lease) is left as it is.
 */
export async function failDeadLetter(
  messageUuid: string,
  receiveCount: number | undefined,
  nowMs: number = Date.now(),
): Promise<'failed' | 'left'> {
  const message = await getDeliveryMessage(messageUuid);
  if (message === undefined) return 'left';
  const lastProblem = [...message.history]
    .reverse()
    .find((entry) => entry.status === 'processing' && entry.detail?.includes('failed'))?.detail;
  const reason = [
    `The send queue gave up after ${message.attempts ?? 0} send attempts`,
    lastProblem === undefined ? undefined : `last: ${lastProblem}`,
  ]
    .filter(Boolean)
    .join('; ');
  const failed = await markFailed(message, { reason, nowMs, from: ['queued', 'processing'] });
  log(
    failed === undefined ? 'info' : 'warn',
    failed === undefined ? 'dead letter left alone' : 'message state change',
    {
      message_uuid: messageUuid,
      status: failed === undefined ? message.status : 'failed',
      receive_count: receiveCount,
    },
  );
  if (failed !== undefined) countMessages('failed');
  return failed === undefined ? 'left' : 'failed';
}
