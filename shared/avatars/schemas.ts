import * as z from 'zod/mini';
import { Code } from '../platform/errors/catalogue.ts';
import { serverDate } from '../platform/schemas/dates.ts';
import { avatarSizes, parseSize, sizePattern } from './model/avatars.ts';

/**
 * Schemas of the avatar and keepalive routes: validation of the input, and the success bodies for the
 * OpenAPI document. `<route>Response` is the `data` member of the success body (the generator wraps it
 * in the envelope).
 */

/** Trimmed and lower-cased (the form Gravatar hashes), then checked; any failure is 10000001. */
const emailParameter = z
  .pipe(
    z.string({ error: 'email is required' }).check(
      z.trim(),
      z.toLowerCase(),
      z.refine((value) => value.length <= 254, {
        message: 'An e-mail address has at most 254 characters',
        params: { catalogueCode: Code.InvalidEmail },
      }),
    ),
    z.email({ message: 'Not a valid e-mail address' }),
  )
  .register(z.globalRegistry, { description: 'The address to look up', example: 'jane.doe@example.com' });

/** Decimal digits within 16–512; absent means 80. Any failure is 10010001. */
const sizeParameter = z
  .pipe(
    z.optional(
      z.string().check(
        z.refine((value) => parseSize(value) !== undefined, {
          message: `size must be a whole number from ${avatarSizes.min} to ${avatarSizes.max}`,
          params: { catalogueCode: Code.InvalidAvatarRequest },
        }),
      ),
    ),
    z.transform((value: string | undefined) => parseSize(value) as number),
  )
  .register(z.globalRegistry, {
    description: `Edge of the square image in pixels, ${avatarSizes.min}–${avatarSizes.max} (default ${avatarSizes.default})`,
    example: '128',
    // The bounds as digits (a query value is a string): what parseSize accepts, for the document.
    pattern: sizePattern,
  });

/** Query string of GET /avatar/get-1.0. */
export const avatarGetRequest = z.strictObject({ email: emailParameter, size: sizeParameter });
export type AvatarGetRequest = z.output<typeof avatarGetRequest>;

export const avatarGetResponse = z.object({
  email: z.string().register(z.globalRegistry, { description: 'The address, trimmed and lower-cased' }),
  content_type: z.string().register(z.globalRegistry, {
    description: 'Media type of the image behind `url` (image/png, image/jpeg, image/gif or image/webp)',
    example: 'image/png',
  }),
  url: z.string().register(z.globalRegistry, {
    description: 'Presigned HTTPS GET URL of the image; needs no token; works until `expires_at`',
  }),
  source: z.enum(['cache', 'fresh']).register(z.globalRegistry, {
    description:
      '`cache` when the service had the image already, `fresh` when it was looked up for this request. ' +
      'Never says whether the address has a Gravatar.',
  }),
  expires_at: serverDate('When `url` stops working; ask again after it (ISO 8601 with offset)'),
});

/** POST /keepalive-1.0 takes no body (or `{}`); any field is 107, like every other request. */
export const keepaliveRunRequest = z.optional(z.strictObject({}));

export const keepaliveRunResponse = z.object({
  examined: z.number().register(z.globalRegistry, { description: 'Cache entries looked at in this run' }),
  removed: z
    .number()
    .register(z.globalRegistry, { description: 'Expired cache entries deleted in this run' }),
  remaining: z.boolean().register(z.globalRegistry, {
    description: 'True when the run stopped for time; the next run resumes where it stopped',
  }),
  resumed: z.boolean().register(z.globalRegistry, {
    description: 'True when this run continued where an earlier one stopped',
  }),
});
