import { recipientEntry } from '../messages/index.ts';
import { log } from '../platform/observability/log.ts';
import { type CountedStatus, countMessages } from '../platform/observability/metrics.ts';
import { suppressAutomatically } from '../suppressions/index.ts';
import { interpretSesEvent } from './model/ses-events.ts';
import {
  applyRecipientUpdates,
  type HistoryEntry,
  type MessageStatus,
  messageStatusFromRecipients,
  needsMessageEntry,
} from './model/status.ts';
import { updateWithRetry } from './store/message-delivery.ts';

/** Statuses in which relay events may still change a message. */
/** The SES events that count in the message metrics (a delay changes nothing yet). */
const countedEvents: Readonly<Record<string, CountedStatus>> = {
  Delivery: 'delivered',
  Bounce: 'bounced',
  Complaint: 'complained',
  Reject: 'failed',
  'Rendering Failure': 'failed',
};
const afterRelay: ReadonlySet<MessageStatus> = new Set(['sent', 'delivered', 'bounced', 'failed']);

export class MessageNotSettledError extends Error {
  constructor() {
    super('The message is still being sent; retry the event later');
    this.name = 'MessageNotSettledError';
  }
}

/**
 * Records one SES event (Delivery, Bounce, Complaint, Reject, DeliveryDelay, Rendering Failure) in the
 * message's recipients and history. Events may arrive out of order and more than once: a recipient
 * never goes back to pending, and an event that changes nothing adds nothing.
 */
export async function recordSesEvent(event: unknown): Promise<'recorded' | 'ignored' | 'unknown-message'> {
  const effect = interpretSesEvent(event);
  if (effect === undefined) return 'ignored';
  let notSettled = false;
  let account: string | undefined;
  const result = await updateWithRetry(effect.messageUuid, (message) => {
    account = message.account_id;
    if (message.status === 'processing') {
      notSettled = true;
      return undefined;
    }
    if (!afterRelay.has(message.status)) return undefined;
    const history: HistoryEntry[] = [];
    let recipients = message.recipients;
    if (effect.failure !== undefined) {
      const pending = recipients
        .filter((recipient) => recipient.status === 'pending')
        .map((recipient) => ({ email: recipient.email, status: 'failed' as const, detail: effect.failure }));
      recipients = applyRecipientUpdates(recipients, pending, effect.at).recipients;
      history.push({ status: 'failed', at: effect.at, detail: effect.failure });
      return { status: 'failed', recipients, history, at: effect.at };
    }
    const applied = applyRecipientUpdates(recipients, effect.updates, effect.at);
    recipients = applied.recipients;
    for (const update of applied.applied) {
      history.push(
        recipientEntry(update.status, effect.at, update.email, update.detail ?? update.status, update.kind),
      );
    }
    const seen = new Set(message.history.map((entry) => `${entry.status}|${entry.recipient}|${entry.at}`));
    for (const note of effect.notes) {
      if (!seen.has(`${note.status}|${note.recipient}|${note.at}`)) history.push(note);
    }
    if (history.length === 0) return undefined;
    const status = message.status === 'failed' ? 'failed' : messageStatusFromRecipients(recipients);
    if (status !== message.status && needsMessageEntry(status, history))
      history.push({ status, at: effect.at });
    return { status, recipients, history, at: effect.at };
  });
  // Hard bounces and complaints join the sending account's suppression list, whether or not the
  // message changed (a redelivered event finds the entry and leaves it as it is). A failure here
  // throws, so EventBridge retries the event.
  if (account !== undefined && (effect.suppress?.length ?? 0) > 0) {
    await suppressAutomatically(
      account,
      (effect.suppress ?? []).map((entry) => ({ ...entry, message_uuid: effect.messageUuid })),
    );
  }
  if (notSettled) throw new MessageNotSettledError();
  if (result === 'missing') {
    log('info', 'delivery event for an unknown message', { message_uuid: effect.messageUuid });
    return 'unknown-message';
  }
  if (result !== 'unchanged') {
    log('info', 'message state change', {
      message_uuid: effect.messageUuid,
      status: result.status,
      event: effect.eventType,
    });
    // SES's account-level list kept the mail from leaving: counted as suppressed, not bounced.
    const platformSuppressed =
      effect.updates.length > 0 && effect.updates.every((update) => update.status === 'suppressed');
    const counted = platformSuppressed ? 'suppressed' : countedEvents[effect.eventType];
    if (counted !== undefined) countMessages(counted);
  }
  return result === 'unchanged' ? 'ignored' : 'recorded';
}
