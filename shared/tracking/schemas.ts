import * as z from 'zod/mini';
import { describe } from '../platform/schemas/describe.ts';

export const trackingTokenRequest = z.strictObject({
  token: describe(z.string(), 'The sealed token of the link (opaque)', 'AXk3b2…'),
});

/** `tracking` on add and batch items: strict, booleans only (docs/tracking.md). */
export const trackingRequest = describe(
  z.strictObject(
    {
      opens: z.optional(z.boolean({ error: 'tracking.opens must be true or false' })),
      clicks: z.optional(z.boolean({ error: 'tracking.clicks must be true or false' })),
    },
    { error: 'tracking must be an object {"opens": bool, "clicks": bool}' },
  ),
  "Open and click tracking for this message, overriding the sending domain's default (off unless the domain turns it on; authentication mail, tagged category: authentication, takes no domain default). Not for eml content",
);
