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
  'from',
  'message-id',
  'mime-version',
  'reply-to',
  'sender',
  'subject',
  'to',
]);

/**
 * Trace and authentication header fields: written by the mail servers a message passes through
 * (`Received`, `Return-Path`, `Resent-*`), by verifiers (`Authentication-Results`, `ARC-*`), by the
 * signer (`DKIM-Signature`) or by Amazon SES (`X-SES-*`), never by the author. A caller's JSON
 * `headers` naming one is 107 (a detail per field); an EML's own are removed before signing, so no
 * tenant can forge a verdict, a hop or a signature under the platform's signature.
 */
const traceHeaderNames: ReadonlySet<string> = new Set([
  'authentication-results',
  'dkim-signature',
  'received',
  'return-path',
]);
const tracePrefixes = ['resent-', 'arc-', 'x-ses-'] as const;

export function isTraceHeader(name: string): boolean {
  const lower = name.trim().toLowerCase();
  return traceHeaderNames.has(lower) || tracePrefixes.some((prefix) => lower.startsWith(prefix));
}

/** Why a caller's custom header is refused, or undefined when it may be set. */
export function refusedHeaderReason(name: string): string | undefined {
  if (isTraceHeader(name)) {
    return 'Trace and authentication headers (Received, Return-Path, Resent-*, Authentication-Results, ARC-*, DKIM-Signature, X-SES-*) are written by mail servers, never by the sender';
  }
  if (reservedHeaders.has(name.trim().toLowerCase())) return 'This header is set by the service';
  return undefined;
}

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
