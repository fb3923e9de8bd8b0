import PostalMime from 'postal-mime';
import { messageUuidTag } from '../../shared/messages/index.ts';

/**
 * What SES's feedback endpoint makes of a delivery status notification (RFC 3464) mailed back to a
 * message's return path, for the local host's stand-in (feedback-endpoint.ts): an "Email Bounced"
 * event of the configuration set, as EventBridge hands it to the delivery-events function. Only
 * recipients whose action is `failed` bounce: a 5.x.x status is a `Permanent` bounce, anything else
 * `Transient`. A message that is no DSN, or names no failed recipient, makes no event.
 */
export interface ReportedRecipient {
  recipient: string;
  action: string;
  status?: string;
  diagnosticCode?: string;
}

export interface DeliveryStatus {
  reportingMta?: string;
  recipients: ReportedRecipient[];
}

/** RFC 3464 fields: blocks of header fields (folded lines joined), one per message or recipient. */
function fieldBlocks(text: string): Array<Map<string, string>> {
  const unfolded = text.replace(/\r\n/g, '\n').replace(/\n[ \t]+/g, ' ');
  return unfolded
    .split(/\n\s*\n/)
    .map((block) => {
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      return fields;
    })
    .filter((fields) => fields.size > 0);
}

/** The address of an `rfc822; user@example.net` field. */
const addressOf = (value: string | undefined): string | undefined => {
  const address = value?.includes(';') ? value.slice(value.indexOf(';') + 1).trim() : value?.trim();
  return address === undefined || !address.includes('@') ? undefined : address.replace(/^<|>$/g, '');
};

/** The delivery-status part's fields; undefined when the message carries none. */
export async function deliveryStatusOf(raw: Buffer): Promise<DeliveryStatus | undefined> {
  const parsed = await PostalMime.parse(raw, { attachmentEncoding: 'utf8' });
  const part = parsed.attachments.find((attachment) =>
    /^message\/(global-)?delivery-status$/i.test(attachment.mimeType),
  );
  if (part === undefined || typeof part.content !== 'string') return undefined;
  const [perMessage, ...perRecipient] = fieldBlocks(part.content);
  const recipients = perRecipient.flatMap((fields): ReportedRecipient[] => {
    const recipient = addressOf(fields.get('final-recipient') ?? fields.get('original-recipient'));
    const action = fields.get('action')?.toLowerCase();
    if (recipient === undefined || action === undefined) return [];
    const entry: ReportedRecipient = { recipient, action };
    const status = fields.get('status');
    const diagnosticCode = fields.get('diagnostic-code');
    if (status !== undefined) entry.status = status;
    if (diagnosticCode !== undefined) entry.diagnosticCode = diagnosticCode;
    return [entry];
  });
  const reportingMta = perMessage?.get('reporting-mta');
  return reportingMta === undefined ? { recipients } : { reportingMta, recipients };
}

/** The "Email Bounced" event SES would send for this report about message `messageUuid`. */
export function bounceEvent(
  report: DeliveryStatus,
  messageUuid: string,
  feedbackId: string,
  configurationSet: string,
  now: Date,
): Record<string, unknown> | undefined {
  const failed = report.recipients.filter((entry) => entry.action === 'failed');
  if (failed.length === 0) return undefined;
  const permanent = failed.some((entry) => entry.status?.startsWith('5') === true);
  const timestamp = now.toISOString();
  return {
    version: '0',
    id: feedbackId,
    'detail-type': 'Email Bounced',
    source: 'aws.ses',
    time: timestamp,
    detail: {
      eventType: 'Bounce',
      mail: {
        timestamp,
        messageId: feedbackId,
        destination: failed.map((entry) => entry.recipient),
        tags: { 'ses:configuration-set': [configurationSet], [messageUuidTag]: [messageUuid] },
      },
      bounce: {
        bounceType: permanent ? 'Permanent' : 'Transient',
        bounceSubType: 'General',
        bouncedRecipients: failed.map((entry) => ({
          emailAddress: entry.recipient,
          action: entry.action,
          ...(entry.status === undefined ? {} : { status: entry.status }),
          ...(entry.diagnosticCode === undefined ? {} : { diagnosticCode: entry.diagnosticCode }),
        })),
        timestamp,
        feedbackId,
        ...(report.reportingMta === undefined ? {} : { reportingMTA: report.reportingMta }),
      },
    },
  };
}
