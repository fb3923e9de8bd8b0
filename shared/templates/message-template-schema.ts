import * as z from 'zod/mini';
import { describe } from '../platform/schemas/describe.ts';
import { aliasPattern } from './model/template.ts';

/**
 * The `template` member of a message (on add, and as a message records it), apart from the template
 * routes' schemas (templates.ts), so message add does not carry those.
 */

export const templateAlias = describe(
  z
    .string({ error: 'alias must be a string' })
    .check(z.regex(aliasPattern, 'alias is 1 to 100 characters of a-z, 0-9, _ and -')),
  'Identifies the template in your account: 1 to 100 characters of a-z, 0-9, _ and -',
  'welcome',
);

export const versionNumber = describe(
  z
    .number({ error: 'version must be a number' })
    .check(z.int('version must be an integer'), z.minimum(1, 'version must be at least 1')),
  'A version number (1, 2, …)',
  3,
);

export const templateModel = describe(
  z.record(z.string(), z.unknown(), { error: 'model must be an object' }),
  'The values the template reads, as a JSON object',
  { user: { first_name: 'Ada' }, items: [{ title: 'Analytical Engine', price: '12.00' }] },
);

/** The `template` member of a message to add: in place of `subject` and `content`. */
export const messageTemplate = describe(
  z.strictObject({
    alias: templateAlias,
    version: z.optional(versionNumber),
    model: z.optional(templateModel),
  }),
  'Send with a template of yours, in place of subject and content: its published version (or `version`) is rendered over `model` when the message is accepted',
);

/** What a message records of its template (query by uuid). */
export const messageTemplateRecord = describe(
  z.object({
    alias: z.string(),
    version: z.number(),
    layout: z.optional(z.object({ alias: z.string(), version: z.number() })),
  }),
  'The template and version the message was rendered from (and its layout)',
);
