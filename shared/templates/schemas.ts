import * as z from 'zod/mini';
import type { $RefinementCtx } from 'zod/v4/core';
import { hasLineBreak } from '../platform/mail/addresses.ts';
import { serverDate } from '../platform/schemas/dates.ts';
import { describe, documented } from '../platform/schemas/describe.ts';
import { pageLimit } from '../platform/schemas/lookup-or-page.ts';
import { templateAlias, templateModel, versionNumber } from './message-template-schema.ts';
import { aliasPattern, maxNameLength, maxTemplatesPerAccount, maxVersionBytes } from './model/template.ts';

/**
 * Request and response schemas of the six template routes (docs/templates.md); the `template`
 * member of a message is in message-template.ts. Requests are strict (an unknown field is 107); response schemas
 * describe the `data` member of the envelope.
 */

/** A subject template is one line; this bounds its source (the rendered subject is at most 998). */
export const maxSubjectSourceLength = 4000;
export const maxTemplateListLimit = 1000;

const name = describe(
  z.string({ error: 'name must be a string' }).check(
    z.trim(),
    z.minLength(1, 'name must not be empty'),
    z.maxLength(maxNameLength, `name is at most ${maxNameLength} characters`),
    z.refine((value) => !hasLineBreak(value), 'Line breaks are not allowed in name'),
  ),
  'A name for people',
  'Welcome mail',
);

const subject = describe(
  z.string({ error: 'subject must be a string' }).check(
    z.maxLength(maxSubjectSourceLength, `subject is at most ${maxSubjectSourceLength} characters`),
    z.refine((value) => !hasLineBreak(value), 'Line breaks are not allowed in subject'),
  ),
  'The subject line, in Handlebars (not HTML-escaped)',
  'Welcome, {{user.first_name}}',
);

const html = describe(
  z.string({ error: 'html must be a string' }),
  'The HTML body, in Handlebars: {{x}} is HTML-escaped, {{{x}}} is not',
  '<p>Hello {{user.first_name}},</p>',
);

const text = describe(
  z.string({ error: 'text must be a string' }),
  'The plain-text body, in Handlebars (not escaped); derived from the HTML when a message is sent without it',
  'Hello {{user.first_name}},',
);

const layoutAlias = describe(
  z
    .string({ error: 'layout_alias must be a string' })
    .check(z.regex(aliasPattern, 'layout_alias is 1 to 100 characters of a-z, 0-9, _ and -')),
  'Another template of yours whose published version wraps this one: its HTML and text render this body at {{{@content}}}',
  'base-layout',
);

/** One custom problem of a refinement: a 107 detail for `field`. */
function issue<T>(context: $RefinementCtx<T>, field: string, message: string, input: unknown): void {
  context.addIssue({ code: 'custom', message, path: [field], input });
}

const bytes = (value: string | null | undefined) =>
  typeof value === 'string' ? Buffer.byteLength(value) : 0;

/** Subject, HTML and text together are at most 500 KB; one of HTML and text is needed. */
const versionChecks = z.superRefine(
  (
    value: {
      alias?: string;
      subject?: string;
      html?: string | null;
      text?: string | null;
      layout_alias?: string | null;
    },
    context,
  ) => {
    const total = bytes(value.subject) + bytes(value.html) + bytes(value.text);
    if (total > maxVersionBytes) {
      issue(
        context,
        typeof value.html === 'string' ? 'html' : 'text',
        `subject, html and text together are ${Math.ceil(total / 1024)} KB; at most ${maxVersionBytes / 1024} KB`,
        undefined,
      );
    }
    if (
      value.layout_alias !== undefined &&
      value.layout_alias !== null &&
      value.layout_alias === value.alias
    ) {
      issue(context, 'layout_alias', 'A template cannot be its own layout', value.layout_alias);
    }
  },
);

export const templateAddRequest = describe(
  z
    .strictObject({
      alias: templateAlias,
      name,
      subject,
      html: z.optional(html),
      text: z.optional(text),
      layout_alias: z.optional(layoutAlias),
    })
    .check(
      versionChecks,
      z.superRefine((value, context) => {
        if (value.html === undefined && value.text === undefined) {
          issue(context, 'html', 'A template needs html, text or both', undefined);
        }
      }),
    ),
  `A new template and its first version (a draft). At most ${maxTemplatesPerAccount} templates per account.`,
);
documented(templateAddRequest, { anyOf: [{ required: ['html'] }, { required: ['text'] }] });
export type TemplateAddRequest = z.infer<typeof templateAddRequest>;

export const templateUpdateRequest = describe(
  z
    .strictObject({
      alias: templateAlias,
      name: z.optional(name),
      subject: z.optional(subject),
      html: z.optional(z.nullable(html)),
      text: z.optional(z.nullable(text)),
      layout_alias: z.optional(z.nullable(layoutAlias)),
    })
    .check(
      versionChecks,
      z.superRefine((value, context) => {
        const { alias: _alias, ...changes } = value;
        if (Object.values(changes).every((change) => change === undefined)) {
          issue(
            context,
            'alias',
            'Give at least one of name, subject, html, text and layout_alias',
            value.alias,
          );
        }
      }),
    ),
  'Changes to a template. subject, html, text or layout_alias make a new draft version from the latest one (null removes html, text or the layout); name alone renames and makes no version.',
);
documented(templateUpdateRequest, { minProperties: 2 });
export type TemplateUpdateRequest = z.infer<typeof templateUpdateRequest>;

export const templatePublishRequest = describe(
  z.strictObject({ alias: templateAlias, version: z.optional(versionNumber) }),
  'Makes a version the live one (default: the latest version). Publishing an older version is the rollback.',
);
export type TemplatePublishRequest = z.infer<typeof templatePublishRequest>;

export const templateDeleteRequest = describe(
  z.strictObject({ alias: templateAlias }),
  'Deletes a template with every version. A template that another one uses as its layout is kept (111).',
);
export type TemplateDeleteRequest = z.infer<typeof templateDeleteRequest>;

export const templateQueryRequest = describe(
  z
    .strictObject({
      alias: z.optional(templateAlias),
      version: z.optional(versionNumber),
      filters: z.optional(z.strictObject({ limit: z.optional(pageLimit(maxTemplateListLimit)) })),
      cursor: z.optional(
        z.string({ error: 'cursor must be a string' }).check(z.maxLength(1024, 'cursor is too long')),
      ),
    })
    .check(
      z.superRefine((value, context) => {
        if (value.alias !== undefined && (value.filters !== undefined || value.cursor !== undefined)) {
          issue(context, 'alias', 'Give either alias or filters/cursor, not both', value.alias);
        }
        if (value.version !== undefined && value.alias === undefined) {
          issue(context, 'version', 'version needs alias', value.version);
        }
      }),
    ),
  'Either {alias, version?} for one template with a version in full (default: the latest), or {filters, cursor} for a page of your templates by alias',
);
export type TemplateQueryRequest = z.infer<typeof templateQueryRequest>;

export const templateRenderRequest = describe(
  z
    .strictObject({
      alias: z.optional(templateAlias),
      version: z.optional(versionNumber),
      subject: z.optional(subject),
      html: z.optional(html),
      text: z.optional(text),
      layout_alias: z.optional(layoutAlias),
      model: z.optional(templateModel),
    })
    .check(
      versionChecks,
      z.superRefine((value, context) => {
        const inline = ['subject', 'html', 'text', 'layout_alias'] as const;
        const given = inline.filter((field) => value[field] !== undefined);
        if (value.alias !== undefined) {
          for (const field of given) {
            issue(context, field, 'Give either alias or the parts to render, not both', value[field]);
          }
        } else {
          if (value.version !== undefined) {
            issue(context, 'version', 'version needs alias', value.version);
          }
          if (value.subject === undefined && value.html === undefined && value.text === undefined) {
            issue(context, 'alias', 'Give alias, or at least one of subject, html and text', undefined);
          }
        }
      }),
    ),
  "Renders a stored template (alias; version: default the published one, else the latest) or inline parts over a model. Problems are answered in `errors`, not as an error: it is an editor's preview.",
);
export type TemplateRenderRequest = z.infer<typeof templateRenderRequest>;

const versionStatus = describe(
  z.enum(['draft', 'published', 'superseded']),
  'draft: never published; published: the live version; superseded: published before, no longer live',
);

export const templateView = z.object({
  alias: templateAlias,
  name: z.string(),
  published_version: describe(z.nullable(z.number()), 'The live version, or null while none is published'),
  versions: describe(
    z.array(
      z.object({ version: z.number(), status: versionStatus, created_at: serverDate('When it was made') }),
    ),
    'Every version the template keeps (the newest 100), newest first',
  ),
});

const writeFields = {
  template: templateView,
  version: describe(
    z.nullable(z.number()),
    'The version created (add, update) or published (publish); null when a rename or a delete made none',
  ),
  dry_run: z.optional(describe(z.boolean(), 'Present and true when nothing was changed (?dry_run=true)')),
};

export const templateAddResponse = z.object(writeFields);
export const templateUpdateResponse = z.object(writeFields);
export const templatePublishResponse = z.object(writeFields);
export const templateDeleteResponse = z.object({
  ...writeFields,
  template: describe(templateView, 'The template as it was'),
  deleted: z.literal(true),
});

export const templateVersionView = z.object({
  version: z.number(),
  status: versionStatus,
  created_at: serverDate('When it was made'),
  subject: z.string(),
  html: z.nullable(z.string()),
  text: z.nullable(z.string()),
  layout_alias: z.nullable(z.string()),
});

export const templateSummary = z.object({
  alias: z.string(),
  name: z.string(),
  published_version: z.nullable(z.number()),
  latest_version: z.number(),
  created_at: serverDate('When the template was added'),
  updated_at: serverDate('When it last changed (a version, a publish or a rename)'),
});

export const templateQueryResponse = z.union([
  z.object({ template: templateView, version: templateVersionView }),
  z.object({
    templates: describe(z.array(templateSummary), 'Your templates by alias'),
    count: describe(z.number(), 'Number of templates in this page'),
    next_cursor: describe(
      z.nullable(z.string()),
      'Pass as `cursor` (with the same filters) for the next page; null at the end',
    ),
  }),
]);

export const renderProblem = z.object({
  part: describe(
    z.string(),
    'subject, html or text; layout.html or layout.text for the layout; model for the model',
  ),
  line: describe(z.number(), 'Line in that part, from 1'),
  message: z.string(),
});

export const templateRenderResponse = z.object({
  subject: z.string(),
  html: z.nullable(z.string()),
  text: describe(z.nullable(z.string()), 'The text part, derived from the HTML when the template has none'),
  errors: describe(
    z.array(renderProblem),
    'Syntax errors, missing variables and the like; empty when a message would be accepted with this model',
  ),
  suggested_model: describe(
    z.record(z.string(), z.unknown()),
    'A model with every variable the template reads (placeholders "<name>_Value")',
  ),
});
