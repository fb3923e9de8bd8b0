import libmime from 'libmime';

/**
 * The header block of a raw RFC 5322 message, taken apart without touching a byte of the rest:
 * the submission server removes `Bcc` and its own `X-Svc-*` control headers and leaves every
 * other byte (other headers, folding, body, attachments) exactly as the client sent it.
 */
export interface HeaderField {
  /** The field name in lower case. */
  name: string;
  /** The unfolded, RFC 2047-decoded value, trimmed. */
  value: string;
}

function headerEnd(raw: Buffer): number {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return raw.length;
  if (crlf === -1) return lf + 1;
  if (lf === -1) return crlf + 2;
  return Math.min(crlf + 2, lf + 1);
}

/** Each field of the header block as its exact bytes, continuation lines included. */
function rawFields(raw: Buffer): { fields: Buffer[]; bodyStart: number } {
  const end = headerEnd(raw);
  const fields: Buffer[] = [];
  let start = 0;
  let lineStart = 0;
  while (lineStart < end) {
    const newline = raw.indexOf(0x0a, lineStart);
    const lineEnd = newline === -1 || newline >= end ? end : newline + 1;
    const first = raw[lineStart];
    const continues = first === 0x20 || first === 0x09;
    if (!continues && lineStart > start) {
      fields.push(raw.subarray(start, lineStart));
      start = lineStart;
    }
    lineStart = lineEnd;
  }
  if (end > start) fields.push(raw.subarray(start, end));
  return { fields, bodyStart: end };
}

function parseField(bytes: Buffer): HeaderField {
  const text = bytes.toString('utf8');
  const colon = text.indexOf(':');
  const name = (colon === -1 ? text : text.slice(0, colon)).trim().toLowerCase();
  const folded = colon === -1 ? '' : text.slice(colon + 1);
  const value = folded.replace(/\r?\n[ \t]/g, ' ').trim();
  let decoded = value;
  try {
    decoded = libmime.decodeWords(value);
  } catch {
    decoded = value;
  }
  return { name, value: decoded };
}

/** Every header field of the message, in order. */
export function headerFields(raw: Buffer): HeaderField[] {
  return rawFields(raw).fields.map(parseField);
}

/**
 * The message without the fields `remove` picks; every other byte is kept as sent.
 */
export function withoutHeaders(raw: Buffer, remove: (name: string) => boolean): Buffer {
  const { fields, bodyStart } = rawFields(raw);
  const kept = fields.filter((field) => !remove(parseField(field).name));
  if (kept.length === fields.length) return raw;
  return Buffer.concat([...kept, raw.subarray(bodyStart)]);
}
