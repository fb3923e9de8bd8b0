import { domainToASCII } from 'node:url';
import addresses from 'email-addresses';

/** A parsed, normalised address: the domain in lower-case ASCII (IDN → A-labels). */
export interface Address {
  email: string;
  name?: string;
}

export type AddressInput = string | { email: string; name?: string | undefined };

export type AddressResult =
  | { ok: true; address: Address }
  | { ok: false; kind: 'email' | 'header' | 'size'; message: string };

/** Longest display name accepted (characters), so no address can bloat a stored message. */
export const maxDisplayNameLength = 256;
/** Longest address text accepted in the `"Name <a@b.example>"` form: name, brackets and address. */
const maxAddressTextLength = maxDisplayNameLength * 2 + 256 + 8;

const crlf = /[\r\n]/;
const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const topLabel = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/** True when a header value would let a caller inject header lines. */
export function hasLineBreak(value: string): boolean {
  return crlf.test(value);
}

function isHostname(domain: string): boolean {
  if (domain.length === 0 || domain.length > 253) return false;
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  return labels.every((part) => label.test(part)) && topLabel.test(labels[labels.length - 1] ?? '');
}

const invalid = (message: string): AddressResult => ({ ok: false, kind: 'email', message });

/**
 * Parses `"a@b.example"`, `"Name <a@b.example>"` or `{email, name}` with an RFC 5322 parser
 * (`email-addresses`, RFC 6532 UTF-8 allowed in names and domains). Domains become lower-case
 * A-labels; local parts must be ASCII (SMTPUTF8 is not offered); groups, lists, comments-only
 * and domain literals are refused. CR/LF anywhere is a header-injection attempt (`kind: 'header'`).
 */
export function parseAddress(input: AddressInput): AddressResult {
  const text = typeof input === 'string' ? input : input.email;
  const name = typeof input === 'string' ? undefined : input.name;
  if (hasLineBreak(text) || (name !== undefined && hasLineBreak(name))) {
    return { ok: false, kind: 'header', message: 'Line breaks are not allowed in an address' };
  }
  if (name !== undefined && name.length > maxDisplayNameLength) {
    return {
      ok: false,
      kind: 'size',
      message: `A display name is at most ${maxDisplayNameLength} characters`,
    };
  }
  if (text.length > maxAddressTextLength) {
    return {
      ok: false,
      kind: 'size',
      message: `An address with its display name is at most ${maxAddressTextLength} characters`,
    };
  }
  const parsed = addresses.parseOneAddress({ input: text.trim(), rfc6532: true, rejectTLD: true });
  if (parsed === null || parsed.type !== 'mailbox') return invalid('Not a valid e-mail address');
  if (typeof input !== 'string' && parsed.name !== null) {
    return invalid('`email` must be a bare address; put the display name in `name`');
  }
  const local = parsed.local;
  if (!/^[\x21-\x7e]+$/.test(local) || local.length > 64)
    return invalid('The local part must be ASCII, at most 64 characters');
  const domain = domainToASCII(parsed.domain.toLowerCase());
  if (!isHostname(domain)) return invalid('The domain is not a valid host name');
  const email = `${local}@${domain}`;
  if (email.length > 254) return invalid('Address is too long');
  const displayName = name ?? parsed.name ?? undefined;
  if (displayName !== undefined && displayName.length > maxDisplayNameLength) {
    return {
      ok: false,
      kind: 'size',
      message: `A display name is at most ${maxDisplayNameLength} characters`,
    };
  }
  const address: Address = { email };
  if (displayName !== undefined && displayName.trim() !== '') address.name = displayName.trim();
  return { ok: true, address };
}

/** The tenant of an address: its lower-case ASCII domain. */
export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}
