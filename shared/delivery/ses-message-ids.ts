import { normaliseDomain } from '../domains/index.ts';
import { inboundRetentionDays, putSesMessageId } from '../inbound/index.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { cachedDomain } from './cached-domain.ts';
import type { MailTransport, TransportResult } from './mail/transport.ts';

/**
 * Threading of replies to mail sent through Amazon SES (docs/inbound.md, "Threading"). SES replaces
 * the Message-ID of what it sends with `<SES id@…amazonses.com>`, so a reply names SES's id. After
 * SES accepted a message, the sender records which message that id is, but only when a domain a
 * reply goes to receives mail for the message's own account: the sending domain, or the domain of
 * a Reply-To address (else of a From address), e.g. mail sent from `mail.example.com` with
 * `Reply-To: support@replies.example.com`. Only then can a reply come back to the service, so every
 * other message costs no write (one GetItem per domain every 30 seconds at most, the sender's domain cache).
 * The record lives as long as received mail (`RETENTION_DAYS`).
 *
 * The mail has left when this runs: a failure here is logged, never a failed or repeated send (a
 * reply to that message is then simply not linked).
 */
/** The account a domain receives mail for (undefined: not registered or not receiving). */
async function receivingOwner(domain: string, nowMs: number): Promise<string | undefined> {
  const record = await cachedDomain(domain, nowMs);
  return record?.receiving === true ? record.accountId : undefined;
}

/** At most this many distinct domains are looked at per message (a long Reply-To list). */
const maxReplyDomains = 5;

/**
 * The domains a reply to the message may be addressed to: its sending domain, then those of its
 * Reply-To addresses, or of its From addresses when it has no Reply-To (RFC 5322, 3.6.2).
 */
export function replyDomainsOf(message: {
  tenant: string;
  from: readonly { email: string }[];
  reply_to: readonly { email: string }[];
}): string[] {
  const addresses = message.reply_to.length > 0 ? message.reply_to : message.from;
  const domains = [message.tenant, ...addresses.map(({ email }) => email.slice(email.lastIndexOf('@') + 1))];
  return [...new Set(domains.map(normaliseDomain))].slice(0, maxReplyDomains);
}

export async function recordSesMessageId(
  message: {
    message_uuid: string;
    account_id: string;
    tenant: string;
    from: readonly { email: string }[];
    reply_to: readonly { email: string }[];
  },
  transport: Pick<MailTransport, 'name'>,
  result: Pick<TransportResult, 'messageId'>,
  nowMs: number,
): Promise<void> {
  if (transport.name !== 'ses' || result.messageId === undefined || result.messageId === '') return;
  try {
    let receives = false;
    for (const domain of replyDomainsOf(message)) {
      receives = (await receivingOwner(domain, nowMs)) === message.account_id;
      if (receives) break;
    }
    if (!receives) return;
    await putSesMessageId({
      ses_message_id: result.messageId.toLowerCase(),
      account_id: message.account_id,
      message_uuid: message.message_uuid,
      tenant: message.tenant,
      expires_at: Math.floor(nowMs / 1000) + inboundRetentionDays() * 86_400,
    });
  } catch (error) {
    log('warn', 'SES message id not recorded: a reply to this message will not be threaded', {
      message_uuid: message.message_uuid,
      ses_message_id: result.messageId,
      ...describeError(error),
    });
  }
}
