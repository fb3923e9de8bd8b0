/**
 * What SES says about one received message (docs/inbound.md): the notification its receipt rule's
 * S3 action publishes once the message is stored, which reaches the inbound queue through SNS with
 * raw delivery. The local host's inbound mail server sends the same JSON. Pure: parsing and the
 * mapping of SES's verdicts to the API's.
 */

/** SPF, DKIM and DMARC as the API reports them. */
export const authVerdicts = ['pass', 'fail', 'none', 'error'] as const;
export type AuthVerdict = (typeof authVerdicts)[number];

/** The spam verdict; `not_scanned` where no scanner ran (the local host has none). */
export const spamVerdicts = ['pass', 'fail', 'gray', 'error', 'not_scanned'] as const;
export type SpamVerdict = (typeof spamVerdicts)[number];

export interface AuthResults {
  spf: AuthVerdict;
  dkim: AuthVerdict;
  dmarc: AuthVerdict;
}

export interface Receipt {
  /** SES's id of the message; the S3 object is `<prefix><messageId>`. */
  messageId: string;
  bucket: string;
  objectKey: string;
  /** When SES received it (UTC ISO 8601). */
  receivedAt: string;
  /** The envelope recipients the receipt rule accepted (RCPT TO), lower-cased. */
  recipients: string[];
  /** The envelope sender (MAIL FROM), or empty for a bounce. */
  source: string;
  auth: AuthResults;
  spam: SpamVerdict;
}

export type ReceiptResult = { ok: true; receipt: Receipt } | { ok: false; reason: string };

/** SES's verdict statuses: PASS, FAIL, GRAY (neither: no record, no signature), PROCESSING_FAILED. */
function authVerdictOf(verdict: unknown): AuthVerdict {
  switch ((verdict as { status?: unknown } | undefined)?.status) {
    case 'PASS':
      return 'pass';
    case 'FAIL':
      return 'fail';
    case 'PROCESSING_FAILED':
      return 'error';
    default:
      return 'none';
  }
}

function spamVerdictOf(verdict: unknown): SpamVerdict {
  switch ((verdict as { status?: unknown } | undefined)?.status) {
    case 'PASS':
      return 'pass';
    case 'FAIL':
      return 'fail';
    case 'GRAY':
      return 'gray';
    case 'PROCESSING_FAILED':
      return 'error';
    default:
      return 'not_scanned';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The receipt in a queue message's body: the SES notification itself (SNS raw delivery), or the
 * SNS envelope around it (`{"Type":"Notification","Message":"…"}`) should raw delivery be off.
 * Anything else (SES's setup notification, a test message) is not a receipt.
 */
export function parseReceipt(body: string): ReceiptResult {
  let value: unknown;
  try {
    value = JSON.parse(body);
    if (isObject(value) && value.Type === 'Notification' && typeof value.Message === 'string') {
      value = JSON.parse(value.Message);
    }
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (!isObject(value) || value.notificationType !== 'Received') {
    return { ok: false, reason: 'not a Received notification' };
  }
  const { mail, receipt } = value;
  if (!isObject(mail) || !isObject(receipt) || !isObject(receipt.action)) {
    return { ok: false, reason: 'notification without mail or receipt' };
  }
  const action = receipt.action;
  if (action.type !== 'S3' || typeof action.bucketName !== 'string' || typeof action.objectKey !== 'string') {
    return { ok: false, reason: 'not an S3 action' };
  }
  const messageId = typeof mail.messageId === 'string' ? mail.messageId : '';
  if (messageId === '' || messageId === 'AMAZON_SES_SETUP_NOTIFICATION') {
    return { ok: false, reason: 'setup notification' };
  }
  const recipients = (Array.isArray(receipt.recipients) ? receipt.recipients : [])
    .filter((entry): entry is string => typeof entry === 'string' && entry.includes('@'))
    .map((entry) => entry.trim().toLowerCase());
  if (recipients.length === 0) return { ok: false, reason: 'no recipients' };
  const timestamp =
    typeof receipt.timestamp === 'string'
      ? receipt.timestamp
      : typeof mail.timestamp === 'string'
        ? mail.timestamp
        : '';
  const received = Date.parse(timestamp);
  return {
    ok: true,
    receipt: {
      messageId,
      bucket: action.bucketName,
      objectKey: action.objectKey,
      receivedAt: new Date(Number.isNaN(received) ? Date.now() : received).toISOString(),
      recipients: [...new Set(recipients)],
      source: typeof mail.source === 'string' ? mail.source : '',
      auth: {
        spf: authVerdictOf(receipt.spfVerdict),
        dkim: authVerdictOf(receipt.dkimVerdict),
        dmarc: authVerdictOf(receipt.dmarcVerdict),
      },
      spam: spamVerdictOf(receipt.spamVerdict),
    },
  };
}

/** The SES status word of an API verdict, for whoever writes a receipt (the local host). */
export function sesStatusOf(verdict: AuthVerdict): 'PASS' | 'FAIL' | 'GRAY' | 'PROCESSING_FAILED' {
  return verdict === 'pass'
    ? 'PASS'
    : verdict === 'fail'
      ? 'FAIL'
      : verdict === 'error'
        ? 'PROCESSING_FAILED'
        : 'GRAY';
}
