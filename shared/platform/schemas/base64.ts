import * as z from 'zod/mini';

const isAlphabet = (code: number) =>
  (code >= 65 && code <= 90) || // A-Z
  (code >= 97 && code <= 122) || // a-z
  (code >= 48 && code <= 57) || // 0-9
  code === 43 || // +
  code === 47; // /

/**
 * True when `value` is padded base64 (RFC 4648 alphabet, a multiple of four characters, at most two
 * `=` at the end). A scan in linear time: a regular expression with a repeated group backtracks
 * once per character and overflows the stack on an attachment of a few megabytes.
 */
export function isBase64(value: string): boolean {
  if (value.length % 4 !== 0) return false;
  let end = value.length;
  while (end > 0 && value.length - end < 2 && value.charCodeAt(end - 1) === 61) end--;
  for (let index = 0; index < end; index++) {
    if (!isAlphabet(value.charCodeAt(index))) return false;
  }
  return true;
}

/** A base64 string field, documented as OpenAPI's `format: byte`. */
export const base64 = (what: string) =>
  z
    .string({ error: `${what} must be a base64 string` })
    .check(z.refine(isBase64, `${what} must be base64`))
    .register(z.globalRegistry, { format: 'byte' } as never);
