import * as z from 'zod/mini';
import { Code } from '../platform/errors/catalogue.ts';
import { parseAddress } from '../platform/mail/addresses.ts';
import { incomingDate, serverDate } from '../platform/schemas/dates.ts';
import { describe, documented } from '../platform/schemas/describe.ts';
import { lookupOrPage, lookupOrPageKeywords, pageLimit } from '../platform/schemas/lookup-or-page.ts';
import { normaliseEmail, suppressionReasons, suppressionStreams } from './model/suppressions.ts';

/**
 * Request and response schemas of the three suppression routes, the single source for validation,
 * types and the OpenAPI document. Requests are strict: an unknown field is 107. Response schemas
 * describe the `data` member of the success body.
 */

export const maxSuppressionBatch = 1000;
export const maxSuppressionLimit = 1000;

/**
 * An address as the suppression routes take it: a bare address or `Name <address>` (the name is
 * ignored), parsed by the same RFC 5322 parser as message recipients, then lower-cased. The routes
 * and `admin suppressions import` share it. It lives at the input boundary, not in the suppression
 * domain, so the sender (which applies suppressions) does not bundle the parser.
 */
export function parseSuppressedAddress(
  input: string,
): { ok: true; email: string } | { ok: false; message: string } {
  const parsed = parseAddress(input);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  return { ok: true, email: normaliseEmail(parsed.address.email) };
}

/** One address, lower-cased; an invalid one is reported with code 10000001. */
const suppressedAddress = describe(
  z.pipe(
    z.string({ error: 'An address must be a string' }),
    z.transform((value, context): string => {
      const result = parseSuppressedAddress(value);
      if (result.ok) return result.email;
      context.issues.push({
        code: 'custom',
        message: result.message,
        input: value,
        params: { catalogueCode: Code.InvalidEmail },
      });
      return z.NEVER;
    }),
  ),
  'An e-mail address; compared case-insensitively and stored lower-cased',
  'ada@example.org',
);

const emailList = describe(
  z
    .array(suppressedAddress, { error: 'emails must be a list of addresses' })
    .check(
      z.minLength(1, 'emails must name at least one address'),
      z.maxLength(maxSuppressionBatch, `emails holds at most ${maxSuppressionBatch} addresses`),
    ),
  `1 to ${maxSuppressionBatch} addresses`,
);

const reason = describe(
  z.enum(suppressionReasons, { error: `reason must be one of ${suppressionReasons.join(', ')}` }),
  'Why the address is suppressed: hard_bounce (a permanent bounce), complaint (a spam report), manual (added through the API or the admin import) or unsubscribed (the one-click unsubscribe of a broadcast)',
  'hard_bounce',
);

const stream = describe(
  z.enum(suppressionStreams, { error: `stream must be one of ${suppressionStreams.join(', ')}` }),
  'Which mail the entry stops: all (bounces, complaints, manual entries: every stream) or broadcast (an unsubscribe: transactional mail still goes out)',
  'all',
);

export const suppressionFilters = z.strictObject({
  reason: z.optional(reason),
  stream: z.optional(stream),
  date_from: z.optional(
    incomingDate('date_from', 'date_from: ISO 8601 with an offset; bounds created_at (inclusive)'),
  ),
  date_to: z.optional(
    incomingDate('date_to', 'date_to: ISO 8601 with an offset; bounds created_at (inclusive)'),
  ),
  limit: z.optional(pageLimit(maxSuppressionLimit)),
});

export const suppressionQueryRequest = describe(
  z
    .strictObject({
      email: z.optional(suppressedAddress),
      filters: z.optional(suppressionFilters),
      cursor: z.optional(
        z.string({ error: 'cursor must be a string' }).check(z.maxLength(4096, 'cursor is too long')),
      ),
    })
    .check(lookupOrPage('email')),
  'Either {email} for one address, or {filters, cursor} for a page of your suppression list, newest first',
);

documented(suppressionQueryRequest, lookupOrPageKeywords('email'));

export type SuppressionQueryRequest = z.infer<typeof suppressionQueryRequest>;

export const suppressionEntry = z.object({
  email: z.string(),
  reason,
  stream,
  detail: describe(z.nullable(z.string()), 'What caused it: the bounce or complaint as reported, or a note'),
  message_uuid: describe(
    z.nullable(z.string()),
    'The message whose bounce, complaint or unsubscribe link added the address; null for manual entries',
  ),
  created_at: serverDate('When the address was suppressed'),
});

export const suppressionQueryResponse = z.union([
  z.object({
    suppression: describe(
      z.nullable(suppressionEntry),
      'The entry, or null when the address is not suppressed',
    ),
  }),
  z.object({
    suppressions: z.array(suppressionEntry),
    count: describe(z.number(), 'Number of entries in this page'),
    next_cursor: describe(
      z.nullable(z.string()),
      'Pass as `cursor` (with the same filters) for the next page; null at the end',
    ),
  }),
]);

export const suppressionAddRequest = describe(
  z.strictObject({ emails: emailList }),
  'Addresses to suppress for your account (reason manual); already listed ones keep their entry',
);
export type SuppressionAddRequest = z.infer<typeof suppressionAddRequest>;

export const suppressionAddResponse = z.object({
  added: describe(z.array(z.string()), 'Addresses newly suppressed (lower-cased)'),
  existing: describe(z.array(z.string()), 'Addresses that were already suppressed'),
  dry_run: z.optional(describe(z.boolean(), 'Present and true when nothing was changed (?dry_run=true)')),
});

export const suppressionDeleteRequest = describe(
  z.strictObject({ emails: emailList }),
  "Addresses to remove from your suppression list (every stream's entry: removing an unsubscribe re-subscribes); mail to them is sent again",
);
export type SuppressionDeleteRequest = z.infer<typeof suppressionDeleteRequest>;

export const suppressionDeleteResponse = z.object({
  deleted: describe(z.array(z.string()), 'Addresses removed from the list (lower-cased)'),
  not_found: describe(z.array(z.string()), 'Addresses that were not on your list'),
  dry_run: z.optional(describe(z.boolean(), 'Present and true when nothing was changed (?dry_run=true)')),
});
