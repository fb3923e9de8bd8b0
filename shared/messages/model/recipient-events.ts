import type { HistoryEntry, StoredRecipient } from './message.ts';

/**
 * Each recipient's events, in order, from the message's history (docs/messages.md, "Recipient
 * events"): what happened to the mail for that address and what the receiving side said. Pure:
 * the query by uuid formats the times.
 *
 * - `sent`: the relay (the recipients' server, an SMTP relay or SES) accepted the message for the
 *   recipient; `response` is its reply. A recipient the relay refused in the same answer, or one
 *   suppressed before it, was not sent. A tracked message's copies each have their own entry.
 * - `delivered`, `bounced`, `failed`, `suppressed`: the recipient reached that status; `response`
 *   is the SMTP reply (from the relay, or the recipient's server through SES).
 * - from SES: a bounce has `bounce_type`, `bounce_subtype` and `diagnostic_code`, a delay
 *   (`delayed`) `delay_type` and `diagnostic_code`, a complaint (`complained`) `complaint_type`.
 *
 * The history holds at most 64 entries (docs/data-model.md, "Item size"); a recipient whose latest
 * status has no entry left still gets it, from its own status, detail and time.
 */
export interface RecipientEvent {
  status: string;
  at: string;
  response?: string;
  bounce_type?: string;
  bounce_subtype?: string;
  diagnostic_code?: string;
  delay_type?: string;
  complaint_type?: string;
}

/** History statuses of entries about one recipient → the event they are. */
const recipientStatuses: Readonly<Record<string, string>> = {
  sent: 'sent',
  delivered: 'delivered',
  bounced: 'bounced',
  failed: 'failed',
  suppressed: 'suppressed',
  complaint: 'complained',
  complained: 'complained',
  delayed: 'delayed',
  unsubscribed: 'unsubscribed',
};

/** Statuses after which the relay never had the message for that recipient. */
const refused = new Set(['bounced', 'failed', 'suppressed']);

const lower = (email: string) => email.toLowerCase();

/** What the receiving side said, from an entry written by `recipientEntry`. */
function eventOf(entry: HistoryEntry & { recipient: string }, status: string): RecipientEvent {
  const event: RecipientEvent = { status, at: entry.at };
  const prefix = `${entry.recipient}: `;
  const answer = entry.detail?.startsWith(prefix) ? entry.detail.slice(prefix.length) : entry.detail;
  if (entry.kind === undefined) {
    if (answer !== undefined && answer !== '') event.response = answer;
    return event;
  }
  const diagnostic = answer?.startsWith(`${entry.kind}: `) ? answer.slice(entry.kind.length + 2) : undefined;
  if (status === 'bounced') {
    const [type, subtype] = entry.kind.split('/');
    if (type !== undefined && type !== '') event.bounce_type = type;
    if (subtype !== undefined && subtype !== '') event.bounce_subtype = subtype;
  } else if (status === 'delayed') event.delay_type = entry.kind;
  else if (status === 'complained') event.complaint_type = entry.kind;
  if (diagnostic !== undefined && diagnostic !== '') event.diagnostic_code = diagnostic;
  return event;
}

export function recipientEvents(
  recipients: readonly Pick<StoredRecipient, 'email' | 'status' | 'detail' | 'updated_at'>[],
  history: readonly HistoryEntry[],
): RecipientEvent[][] {
  const events = new Map<string, RecipientEvent[]>();
  for (const recipient of recipients) events.set(lower(recipient.email), []);
  const push = (email: string, event: RecipientEvent) => events.get(lower(email))?.push(event);

  for (const entry of history) {
    if (entry.recipient === undefined) {
      if (entry.status !== 'sent') continue;
      // Refusals of the same relay answer are recorded with its time, suppressions before it.
      const notSent = new Set(
        history
          .filter(
            (other) => other.recipient !== undefined && refused.has(other.status) && other.at <= entry.at,
          )
          .map((other) => lower(other.recipient as string)),
      );
      for (const recipient of recipients) {
        if (notSent.has(lower(recipient.email))) continue;
        push(recipient.email, {
          status: 'sent',
          at: entry.at,
          ...(entry.detail === undefined ? {} : { response: entry.detail }),
        });
      }
      continue;
    }
    const status = recipientStatuses[entry.status];
    if (status !== undefined)
      push(entry.recipient, eventOf(entry as HistoryEntry & { recipient: string }, status));
  }

  return recipients.map((recipient) => {
    const list = [...(events.get(lower(recipient.email)) ?? [])];
    if (recipient.status !== 'pending' && !list.some((event) => event.status === recipient.status)) {
      // The history no longer holds it (full), or the change was recorded for the whole message
      // (a message failed by the dispatcher): the recipient's own status says it.
      list.push({
        status: recipient.status,
        at: recipient.updated_at,
        ...(recipient.detail === undefined ? {} : { response: recipient.detail }),
      });
    }
    return list.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  });
}
