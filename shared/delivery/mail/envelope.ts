import { createHmac } from 'node:crypto';
import { envString } from '../../platform/config/env.ts';

/**
 * The envelope sender and the feedback identifier of a message.
 *
 * - `MAIL FROM` is `<message_uuid>@<mail from domain>`: the domain's own MAIL FROM domain when it
 *   has one (`mail_from_subdomain` of a domain added through the API), else
 *   `<MAIL_FROM_SUBDOMAIN>.<tenant>` (`bounce.<tenant>` by default): a per-message bounce address (VERP), so an asynchronous bounce names the message it is about,
 *   and on a subdomain of the sending domain, so SPF of that subdomain aligns with the From domain
 *   under DMARC's relaxed alignment. With SES, SES writes the envelope sender itself from the
 *   identity's custom MAIL FROM domain (docs/deploy.md).
 * - `Feedback-ID: <message_uuid>:<account tag>:<tenant>:svc`, the header Gmail's feedback loop (and
 *   others) aggregate complaints by; the last field identifies this service as the sender. The
 *   account appears only as an opaque, stable tag (a keyed hash, `accountTag`): every recipient sees
 *   the header, and an account id may be an e-mail address or an identity provider's user id.
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

/**
 * The per-message envelope sender: `<message_uuid>@bounce.example.com`, or at the domain's own
 * MAIL FROM domain (`domainMailFrom`, e.g. `mail.example.com`) when it has one.
 */
export function bounceAddress(messageUuid: string, tenant: string, domainMailFrom?: string): string {
  return `${messageUuid.toLowerCase()}@${domainMailFrom?.toLowerCase() ?? mailFromDomain(tenant)}`;
}

/** A Feedback-ID field: colons separate the fields, so none may contain one (nor space or control). */
const field = (value: string) => value.replace(/[:\s\p{Cc}]+/gu, '-');

/**
 * The account's Feedback-ID tag: `a` + 20 base32 characters (100 bits) of HMAC-SHA256(key, account).
 * Stable for an account as long as the key is (the deployment's, shared/platform/table/service-keys.ts);
 * without the key nobody can tell which account it stands for or test a guess.
 */
export function accountTag(key: Buffer, accountId: string): string {
  const digest = createHmac('sha256', key).update(`feedback-id\u0000${accountId}`).digest();
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let tag = 'a';
  for (let bit = 0; bit < 100; bit += 5) {
    const byte = bit >> 3;
    const value = (((digest[byte] ?? 0) << 8) | (digest[byte + 1] ?? 0)) >> (11 - (bit & 7));
    tag += alphabet[value & 31];
  }
  return tag;
}

/** `<message_uuid>:<account tag>:<tenant>:svc`. */
export function feedbackId(messageUuid: string, accountTagValue: string, tenant: string): string {
  return `${field(messageUuid)}:${field(accountTagValue)}:${field(tenant.toLowerCase())}:svc`;
}
