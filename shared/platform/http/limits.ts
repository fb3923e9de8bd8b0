/**
 * The largest request body the service accepts: 6 MB (6,000,000 bytes). Lambda's synchronous
 * payload limit (6 MiB, 6,291,456 bytes) holds the whole event, the body as a JSON string beside
 * headers and request context, so a body of 6 MiB itself would fail inside AWS; the 291,456 bytes
 * between them are kept for the rest of the event and the body's JSON escaping.
 */
export const requestLimits = { maxBodyBytes: 6_000_000, maxBodyMegabytes: 6 } as const;

/** The detail of a 107 for a request body over the gateway's limit (local gateway and stack alike). */
export const tooLargeDetail = {
  field: '(body)',
  message: `The request is larger than the gateway accepts: at most ${requestLimits.maxBodyMegabytes} MB`,
} as const;

/** The message of a 102: which method(s) the path does accept. */
export function methodNotAllowedMessage(path: string, allow: string): string {
  return `${path} accepts only ${allow}`;
}
