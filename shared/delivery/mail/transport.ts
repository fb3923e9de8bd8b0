import { envString } from '../../platform/config/env.ts';

/**
 * The one port every relay sits behind. `smtp` (nodemailer, any relay at SMTP_URL; locally the
 * embedded server) or `ses` (Amazon SES v2 SendEmail with raw content); ./mail-transport.ts loads
 * the one MAIL_TRANSPORT names.
 */
export interface OutgoingMail {
  messageUuid: string;
  /** SMTP envelope: `from` is the per-message bounce address (shared/delivery/mail/envelope.ts). */
  envelope: { from: string; to: string[] };
  /**
   * The sending address (`message_sender`). SES sends as this identity and writes the envelope
   * sender itself, from the identity's custom MAIL FROM domain.
   */
  sender?: string;
  raw: Buffer;
  /** The message's tags (SES passes them on as message tags, in its events; SMTP has no place for them). */
  tags?: ReadonlyArray<{ name: string; value: string }>;
}

export interface RecipientResult {
  email: string;
  outcome: 'accepted' | 'rejected';
  /** 5xx: the recipient is refused for good (a bounce); 4xx: only for now. */
  permanent: boolean;
  response?: string;
}

export interface TransportResult {
  /** The relay's id for the message (SES MessageId, or the SMTP queue id in its reply). */
  messageId?: string;
  response?: string;
  recipients: RecipientResult[];
  /**
   * True when the relay is the recipients' own mail server, so acceptance is delivery
   * (SMTP_FINAL_HOP). Otherwise accepted recipients stay pending until delivery events arrive.
   */
  finalHop: boolean;
}

/** A send that did not happen. `permanent` failures are never retried. */
export class TransportError extends Error {
  readonly permanent: boolean;
  constructor(message: string, permanent: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
    this.permanent = permanent;
  }
}

export interface MailTransport {
  readonly name: 'smtp' | 'ses';
  /** Header fields the relay rewrites; the DKIM signature must not cover them. */
  readonly rewrittenHeaders: readonly string[];
  send(mail: OutgoingMail): Promise<TransportResult>;
}

export type TransportName = MailTransport['name'];

/**
 * The header fields each relay rewrites (left out of the DKIM signature): Amazon SES replaces
 * Message-ID and Date; an SMTP relay is trusted to leave them alone.
 */
export const rewrittenHeadersOf: Readonly<Record<TransportName, readonly string[]>> = {
  smtp: [],
  ses: ['Message-ID', 'Date'],
};

/** The relay MAIL_TRANSPORT names, without loading it (a message composed before it is sent). */
export function configuredTransport(): TransportName {
  const kind = (envString('MAIL_TRANSPORT') ?? 'smtp').toLowerCase();
  if (kind !== 'ses' && kind !== 'smtp') throw new Error(`MAIL_TRANSPORT must be smtp or ses, got "${kind}"`);
  return kind;
}
