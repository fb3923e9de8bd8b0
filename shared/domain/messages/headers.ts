/**
 * Header fields the service writes itself: a caller's `headers` map may not set them (107 at the
 * API) and the composer never copies them from stored data.
 */
export const reservedHeaders: ReadonlySet<string> = new Set([
  'bcc',
  'cc',
  'content-disposition',
  'content-transfer-encoding',
  'content-type',
  'date',
  'dkim-signature',
  'from',
  'message-id',
  'mime-version',
  'received',
  'reply-to',
  'return-path',
  'sender',
  'subject',
  'to',
]);

/** RFC 5322's line limit: the longest subject accepted (characters). */
export const maxSubjectLength = 998;
/** Custom header fields per message, and their names and values together (UTF-8 bytes). */
export const maxCustomHeaders = 50;
export const maxCustomHeaderBytes = 16 * 1024;

/** UTF-8 size of a caller's custom header map (`name: value` per field). */
export function customHeaderBytes(headers: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const [name, value] of Object.entries(headers)) total += Buffer.byteLength(`${name}: ${value}\r\n`);
  return total;
}
