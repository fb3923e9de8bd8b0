import { messageUuidTag, recipientEntry } from '../../messages/index.ts';
import type { HistoryEntry, RecipientUpdate } from './status.ts';

/**
 * Reads an Amazon SES event as EventBridge delivers it (`source: aws.ses`, `detail-type: "Email
 * Delivered"`, "Email Bounced", "Email Complaint Received", "Email Rejected", "Email Delivery Delayed",
 * …; `detail` is the SES event record with `eventType`, `mail` and one event object). Pure: it only
 * says what the event means for the message it names.
 */

export interface SesEventEffect {
  messageUuid: string;
  eventType: string;
  /** Recipient status changes (delivered, bounced, failed). */
  updates: RecipientUpdate[];
  /** History entries that are not a recipient status change (complaint, delay). */
  notes: HistoryEntry[];
  /** When set, the whole message failed (SES rejected it). */
  failure?: string;
  /**
   * Recipients to put on the sending account's suppression list: a `Permanent` bounce
   * (`hard_bounce`) or a complaint. `Transient` (soft) bounces never suppress.
   */
  suppress?: Array<{ email: string; reason: 'hard_bounce' | 'complaint'; detail: string }>;
  at: string;
}

type Json = Record<string, unknown>;

const asObject = (value: unknown): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asString = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined;

/** The SES record inside an EventBridge event; also accepts a bare SES record (SNS, Firehose). */
function sesRecord(event: unknown): Json {
  const outer = asObject(event);
  return outer.detail !== undefined ? asObject(outer.detail) : outer;
}

export function messageUuidOf(mail: Json): string | undefined {
  const tags = asObject(mail.tags);
  const tagged = asString(asArray(tags[messageUuidTag])[0]);
  if (tagged !== undefined) return tagged;
  // Without a configuration-set tag, fall back to our Message-ID `<uuid@tenant>` when SES kept it.
  const messageId = asString(asObject(mail.commonHeaders).messageId);
  const match = messageId?.match(/^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@/i);
  return match?.[1]?.toLowerCase();
}

function timestampOf(record: Json, eventObject: Json): string {
  const text = asString(eventObject.timestamp) ?? asString(asObject(record.mail).timestamp);
  const time = text === undefined ? Number.NaN : Date.parse(text);
  return Number.isNaN(time) ? new Date().toISOString() : new Date(time).toISOString();
}

function clip(text: string): string {
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

/**
 * The subtype SES gives a Bounce (and a Complaint) when it did not send to an address because the
 * address is on the AWS account's suppression list. That list is shared by every tenant of the
 * deployment (and every other workload of the AWS account): the entry may come from another
 * tenant's bounce or complaint, so it is recorded as what it is, never copied into the sending
 * account's own list as a hard bounce or complaint (docs/suppressions.md).
 */
export const onAccountSuppressionList = 'OnAccountSuppressionList';

export const platformSuppressionDetail =
  'Not sent: the address is on the SES account-level suppression list, which every account of this deployment shares (not on your own list)';

/** Recipients SES skipped because of its account-level list: `suppressed`, with what it means. */
function platformSuppressed(entries: unknown[]): RecipientUpdate[] {
  return entries.flatMap((entry) => {
    const email = asString(asObject(entry).emailAddress);
    return email === undefined
      ? []
      : [{ email, status: 'suppressed' as const, detail: platformSuppressionDetail }];
  });
}

/** Undefined when the event names no message of ours or is of a kind that changes nothing. */
export function interpretSesEvent(event: unknown): SesEventEffect | undefined {
  const record = sesRecord(event);
  const eventType = asString(record.eventType) ?? asString(record.notificationType);
  const mail = asObject(record.mail);
  const messageUuid = messageUuidOf(mail);
  if (eventType === undefined || messageUuid === undefined) return undefined;
  switch (eventType) {
    case 'Delivery': {
      const delivery = asObject(record.delivery);
      const response = asString(delivery.smtpResponse) ?? 'delivered';
      const updates = asArray(delivery.recipients)
        .map(asString)
        .filter((email): email is string => email !== undefined)
        .map((email) => ({ email, status: 'delivered' as const, detail: clip(response) }));
      return { messageUuid, eventType, updates, notes: [], at: timestampOf(record, delivery) };
    }
    case 'Bounce': {
      const bounce = asObject(record.bounce);
      const kind = [asString(bounce.bounceType), asString(bounce.bounceSubType)].filter(Boolean).join('/');
      if (asString(bounce.bounceSubType) === onAccountSuppressionList) {
        // Not a bounce: SES did not try, because the address is on the AWS account's list.
        const updates = platformSuppressed(asArray(bounce.bouncedRecipients));
        return { messageUuid, eventType, updates, notes: [], suppress: [], at: timestampOf(record, bounce) };
      }
      const updates = asArray(bounce.bouncedRecipients).flatMap((entry) => {
        const recipient = asObject(entry);
        const email = asString(recipient.emailAddress);
        if (email === undefined) return [];
        const reason = asString(recipient.diagnosticCode) ?? asString(recipient.status) ?? 'bounced';
        const classification = kind || 'Bounce';
        return [
          {
            email,
            status: 'bounced' as const,
            detail: clip(`${classification}: ${reason}`),
            kind: classification,
          },
        ];
      });
      const suppress =
        asString(bounce.bounceType) === 'Permanent'
          ? updates.map((update) => ({
              email: update.email,
              reason: 'hard_bounce' as const,
              detail: update.detail,
            }))
          : [];
      return { messageUuid, eventType, updates, notes: [], suppress, at: timestampOf(record, bounce) };
    }
    case 'Complaint': {
      const complaint = asObject(record.complaint);
      const at = timestampOf(record, complaint);
      if (asString(complaint.complaintSubType) === onAccountSuppressionList) {
        // Nobody complained about this message: SES did not send it (the address complained before).
        const updates = platformSuppressed(asArray(complaint.complainedRecipients));
        return { messageUuid, eventType, updates, notes: [], suppress: [], at };
      }
      const feedback = asString(complaint.complaintFeedbackType) ?? 'complaint';
      const complained = asArray(complaint.complainedRecipients)
        .map((entry) => asString(asObject(entry).emailAddress))
        .filter((email): email is string => email !== undefined);
      const notes = complained.map((email) => recipientEntry('complaint', at, email, feedback, feedback));
      const suppress = complained.map((email) => ({
        email,
        reason: 'complaint' as const,
        detail: clip(`Complaint: ${feedback}`),
      }));
      return { messageUuid, eventType, updates: [], notes, suppress, at };
    }
    case 'DeliveryDelay': {
      const delay = asObject(record.deliveryDelay);
      const at = timestampOf(record, delay);
      const delayType = asString(delay.delayType) ?? 'delayed';
      const notes = asArray(delay.delayedRecipients).flatMap((entry) => {
        const recipient = asObject(entry);
        const email = asString(recipient.emailAddress);
        const reason = asString(recipient.diagnosticCode) ?? asString(recipient.status);
        if (email === undefined) return [];
        const note = recipientEntry(
          'delayed',
          at,
          email,
          [delayType, reason].filter(Boolean).join(': '),
          delayType,
        );
        return [{ ...note, detail: clip(note.detail as string) }];
      });
      return { messageUuid, eventType, updates: [], notes, at };
    }
    case 'Reject': {
      const reject = asObject(record.reject);
      const reason = `Rejected by the relay: ${asString(reject.reason) ?? 'no reason given'}`;
      return {
        messageUuid,
        eventType,
        updates: [],
        notes: [],
        failure: reason,
        at: timestampOf(record, reject),
      };
    }
    case 'Rendering Failure': {
      const failure = asObject(record.failure);
      const reason = `Rendering failed: ${asString(failure.errorMessage) ?? 'no reason given'}`;
      return {
        messageUuid,
        eventType,
        updates: [],
        notes: [],
        failure: clip(reason),
        at: timestampOf(record, failure),
      };
    }
    default:
      return undefined;
  }
}
