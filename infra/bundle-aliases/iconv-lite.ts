/**
 * Bundle alias for `iconv-lite` (infra/bundling.ts): libmime, which mailauth's DKIM signer loads,
 * requires iconv-lite for one thing, decoding a header or body in a legacy charset, and its
 * conversion tables are about 500 KB of the sender. Node's own WHATWG TextDecoder (full ICU)
 * decodes the same legacy charsets (ISO-8859-*, windows-125x, Shift_JIS, EUC-JP, ISO-2022-JP, GBK,
 * gb18030, Big5, EUC-KR, KOI8 …). An unknown charset throws, as iconv-lite does, and libmime falls
 * back to UTF-8 then. The sender only signs, so it never reaches this; the alias keeps the bundle lean.
 */
export function decode(buffer: Uint8Array, charset: string): string {
  return new TextDecoder(charset.trim().toLowerCase()).decode(buffer);
}

export function encodingExists(charset: string): boolean {
  try {
    new TextDecoder(charset.trim().toLowerCase());
    return true;
  } catch {
    return false;
  }
}

/** Only UTF-8 and Latin-1 are encodable here (what Node's Buffer writes); libmime never encodes. */
export function encode(text: string, charset: string): Buffer {
  const name = charset
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  if (name === 'utf8') return Buffer.from(text, 'utf8');
  if (name === 'latin1' || name === 'iso88591' || name === 'binary') return Buffer.from(text, 'latin1');
  throw new Error(`Encoding not supported in this bundle: ${charset}`);
}

export default { decode, encode, encodingExists };
