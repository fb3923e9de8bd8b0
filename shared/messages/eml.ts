import type { Address as ParsedAddress } from 'postal-mime';
import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { type Address, parseAddress } from '../platform/mail/addresses.ts';
import { maxSubjectLength } from '../platform/mail/headers.ts';

export interface EmlFacts {
  from: Address[];
  /**
   * Every mailbox of every `From` and `Sender` header (all occurrences, not only the first one a
   * mail client shows): each one's domain must belong to the caller (sender ownership).
   */
  claimedSenders: Address[];
  /** Attachments inside the message (they count against the per-message limit). */
  attachmentCount: number;
  to: Address[];
  cc: Address[];
  bcc: Address[];
  replyTo: Address[];
  subject: string;
}

const field = 'content.eml';

/**
 * Parses an RFC 5322 message with postal-mime (loaded only for eml content, to keep the common
 * path light) and returns its addresses and subject. A message that does not parse, or has no
 * From header, is 107; an invalid address inside it is 10000001.
 */
export async function readEml(raw: Buffer): Promise<EmlFacts> {
  const { default: PostalMime, addressParser } = await import('postal-mime');
  let email: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    email = await PostalMime.parse(raw);
  } catch {
    throw new ServiceError(Code.InvalidInput, undefined, {
      details: [{ field, message: 'Not a parsable RFC 5322 message' }],
    });
  }
  if (email.headers.length === 0 || email.from === undefined) {
    throw new ServiceError(Code.InvalidInput, undefined, {
      details: [{ field, message: 'The message needs RFC 5322 headers, including From' }],
    });
  }
  const bad: string[] = [];
  const convert = (list: ParsedAddress[] | ParsedAddress | undefined): Address[] => {
    const flat = (list === undefined ? [] : Array.isArray(list) ? list : [list]).flatMap((entry) =>
      entry.group === undefined ? [entry] : entry.group,
    );
    const result: Address[] = [];
    for (const mailbox of flat) {
      const parsed = parseAddress(
        mailbox.name === '' ? { email: mailbox.address } : { email: mailbox.address, name: mailbox.name },
      );
      if (parsed.ok) result.push(parsed.address);
      else bad.push(mailbox.address);
    }
    return result;
  };
  // Each From/Sender header line on its own, parsed with the same MIME parser: a second From
  // header (which some clients display instead of the first) cannot slip past the ownership check.
  const claimed = email.headers
    .filter((header) => header.key === 'from' || header.key === 'sender')
    .flatMap((header) => convert(addressParser(header.value, { flatten: true })));
  const subject = (email.subject ?? '').replace(/[\r\n]+/g, ' ');
  if (subject.length > maxSubjectLength) {
    throw new ServiceError(Code.InvalidInput, undefined, {
      details: [{ field, message: `The Subject is at most ${maxSubjectLength} characters` }],
    });
  }
  const facts: EmlFacts = {
    from: convert(email.from),
    claimedSenders: claimed,
    attachmentCount: email.attachments.length,
    to: convert(email.to),
    cc: convert(email.cc),
    bcc: convert(email.bcc),
    replyTo: convert(email.replyTo),
    subject,
  };
  if (bad.length > 0) {
    throw new ServiceError(Code.InvalidEmail, undefined, {
      details: bad.map((address) => ({
        field,
        message: `Invalid address in the message: ${address.slice(0, 100)}`,
      })),
    });
  }
  return facts;
}
