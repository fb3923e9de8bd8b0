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
