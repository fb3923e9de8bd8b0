/**
 * The budget of parsing one received message (docs/security.md, "Limits"; docs/inbound.md,
 * "Parsing"). Past any of them the message is stored raw with `parse_error` and announced; it
 * never fails the other messages of its batch.
 */
export const inboundParseLimits = {
  /**
   * Time to parse one message and store its attachments. The inbound function takes up to five
   * receipts at a time, one after another, within its timeout (infra/resources/definitions.ts).
   */
  deadlineMs: 20_000,
  /** MIME parts (nested ones included) at most. */
  parts: 500,
  /** Characters of the HTML part at most (its text is derived from it when there is no text part). */
  htmlLength: 2 * 1024 * 1024,
} as const;
