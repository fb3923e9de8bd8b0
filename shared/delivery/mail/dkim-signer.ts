import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { SigningError } from './signing-error.ts';

/** A domain's active DKIM key, as the key store hands it to the sender (decrypted, in memory only). */
export interface SigningKey {
  domain: string;
  selector: string;
  algorithm: 'rsa-sha256' | 'ed25519-sha256';
  privateKeyPem: string;
}

/** mailauth's default header list without the fields a relay rewrites, plus Feedback-ID. */
const signedHeaders = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-ID',
  'Content-Description',
  'In-Reply-To',
  'References',
  'Feedback-ID',
  'List-Id',
  'List-Help',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Subscribe',
  'List-Post',
  'List-Owner',
  'List-Archive',
];

/**
 * Header fields listed in `h=` once more than the message has them (RFC 6376 section 8.15), as
 * OpenDKIM's OversignHeaders and rspamd do: whoever adds one of these after signing (a second
 * From, a Reply-To, a List-Unsubscribe) breaks the signature. From occurs once, so it is listed twice.
 */
export const oversignedHeaders = [
  'From',
  'Reply-To',
  'Cc',
  'To',
  'Subject',
  'Date',
  'Message-ID',
  'Content-Type',
  'MIME-Version',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
] as const;

/** The field names of a DKIM-Signature's `h=` tag, lower-cased, in order. */
export function signedFieldNames(signatureHeader: string): string[] {
  const unfolded = signatureHeader.replace(/\r?\n[ \t]+/g, ' ');
  const tag = unfolded.match(/(?:^|;)\s*h\s*=([^;]*)/i)?.[1] ?? '';
  return tag
    .split(':')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}

/**
 * Prepends one DKIM-Signature (relaxed/relaxed) per key, each made with its key's algorithm: a
 * domain on ed25519-sha256 passes its Ed25519 key and its RSA companion, so receivers that cannot
 * verify Ed25519 still find a signature they can (RFC 8463 section 4). The signatures oversign
 * (`oversignedHeaders`) through mailauth's `oversignHeaders` option (patches/mailauth+*.patch).
 * `rewrittenHeaders` are left out of the signature: Amazon SES replaces Message-ID and Date, so
 * signing them would break it. `signTime` is the signature's `t=` (now by default): RSA PKCS#1 v1.5
 * and Ed25519 signatures are deterministic, so the same bytes, keys and time sign to the same
 * signature again (docs/messages.md, "Content").
 */
export async function signMessage(
  raw: Buffer,
  keys: SigningKey | readonly SigningKey[],
  rewrittenHeaders: readonly string[] = [],
  signTime?: Date,
): Promise<Buffer> {
  const list = Array.isArray(keys) ? (keys as readonly SigningKey[]) : [keys as SigningKey];
  if (list.length === 0) throw new SigningError('DKIM signing failed (no key)');
  const skip = new Set(rewrittenHeaders.map((name) => name.toLowerCase()));
  const kept = (names: readonly string[]) => names.filter((name) => !skip.has(name.toLowerCase()));
  const result = await dkimSign(raw, {
    canonicalization: 'relaxed/relaxed',
    headerList: kept(signedHeaders),
    oversignHeaders: kept(oversignedHeaders),
    ...(signTime === undefined ? {} : { signTime }),
    signatureData: list.map((key) => ({
      signingDomain: key.domain,
      selector: key.selector,
      privateKey: key.privateKeyPem,
      algorithm: key.algorithm,
    })),
  } as Parameters<typeof dkimSign>[1]);
  const signatures = result.signatures.split(/\r\n(?=DKIM-Signature:)/i).filter((line) => line.trim() !== '');
  if (signatures.length !== list.length || (result.errors?.length ?? 0) > 0) {
    const first = result.errors?.[0] as { err?: { code?: string } } | undefined;
    throw new SigningError(`DKIM signing failed (${first?.err?.code ?? 'no signature produced'})`);
  }
  // The oversigning comes from a patch of mailauth; a signature without it must never leave.
  for (const signature of signatures) {
    if (signedFieldNames(signature).filter((name) => name === 'from').length < 2) {
      throw new SigningError('DKIM signing failed (the signer did not oversign From)');
    }
  }
  return Buffer.concat([Buffer.from(result.signatures), raw]);
}
