import { envNumber } from '../platform/config/env.ts';

/** Settings of the content route (docs/messages.md, "Content"), read once. */
export const contentSettings = {
  /**
   * Lifetime of the presigned URLs of the signed message and its attachments, at most an hour
   * (a URL signed with a Lambda role's credentials stops working when they expire anyway).
   */
  urlTtlSeconds: Math.min(3_600, envNumber('CONTENT_URL_TTL_SECONDS', 900, { min: 1 })),
};
