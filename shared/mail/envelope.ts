import { envString } from '../config/env.ts';

/**
 * The envelope sender and the feedback identifier of a message.
 *
 * - `MAIL FROM` is `<message_uuid>@<MAIL_FROM_SUBDOMAIN>.<tenant>` (`bounce.<tenant>` by default):
 *   a per-message bounce address (VERP), so an asynchronous bounce names the message it is about,
 *   and on a subdomain of the sending domain, so SPF of that subdomain aligns with the From domain
 *   under DMARC's relaxed alignment. With SES, SES writes the envelope sender itself from the
 *   identity's custom MAIL FROM domain (docs/deploy.md).
 * - `Feedback-ID: <message_uuid>:<account>:<tenant>:svc`, the header Gmail's feedback loop (and
 *   others) aggregate complaints by; the last field identifies this service as the sender.
 */
const labelPattern = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Checks MAIL_FROM_SUBDOMAIN: one or more DNS labels, e.g. `bounce` or `mail.bounce`. */
export function parseMailFromSubdomain(value: string | undefined): string {
  const subdomain = (value ?? 'bounce').trim().toLowerCase().replace(/\.$/, '');
  if (!subdomain.split('.').every((label) => labelPattern.test(label))) {
    throw new Error(`Configuration MAIL_FROM_SUBDOMAIN must be DNS labels such as "bounce", got "${value}"`);
  }
  return subdomain;
}

export const mailFromSubdomain = parseMailFromSubdomain(envString('MAIL_FROM_SUBDOMAIN'));

/** The MAIL FROM domain of a sending domain: `bounce.example.com`. */
export function mailFromDomain(tenant: string, subdomain: string = mailFromSubdomain): string {
  return `${subdomain}.${tenant.toLowerCase()}`;
}

/** The per-message envelope sender: `<message_uuid>@bounce.example.com`. */
export function bounceAddress(
  messageUuid: string,
  tenant: string,
  subdomain: string = mailFromSubdomain,
): string {
  return `${messageUuid.toLowerCase()}@${mailFromDomain(tenant, subdomain)}`;
}

/** A Feedback-ID field: colons separate the fields, so none may contain one (nor space or control). */
const field = (value: string) => value.replace(/[:\s\p{Cc}]+/gu, '-');

/** `<message_uuid>:<account>:<tenant>:svc`. */
export function feedbackId(messageUuid: string, accountId: string, tenant: string): string {
  return `${field(messageUuid)}:${field(accountId)}:${field(tenant.toLowerCase())}:svc`;
}
