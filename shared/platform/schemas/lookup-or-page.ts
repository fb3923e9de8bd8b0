import * as z from 'zod/mini';
import { requiredTogether } from './describe.ts';

/**
 * The one refinement of every "one item or a page" query body (`{<key>}` or `{filters, cursor}`):
 * the two forms are exclusive, and a date range must not run backwards.
 */
export function lookupOrPage<Key extends string>(key: Key) {
  return z.superRefine(
    (
      value: {
        filters?: { date_from?: string; date_to?: string } | undefined;
        cursor?: string | undefined;
      } & {
        [K in Key]?: unknown;
      },
      context,
    ) => {
      if (value[key] !== undefined && (value.filters !== undefined || value.cursor !== undefined)) {
        context.addIssue({
          code: 'custom',
          message: `Give either ${key} or filters/cursor, not both`,
          path: [key],
          input: value[key],
        });
      }
      const from = value.filters?.date_from;
      const to = value.filters?.date_to;
      if (from !== undefined && to !== undefined && Date.parse(from) > Date.parse(to)) {
        context.addIssue({
          code: 'custom',
          message: 'date_from is after date_to',
          path: ['filters', 'date_from'],
          input: from,
        });
      }
    },
  );
}

/** The `limit` of a page query: an integer from 1 to `max`. */
export const pageLimit = (max: number) =>
  z
    .number({ error: 'limit must be a number' })
    .check(
      z.int('limit must be an integer'),
      z.minimum(1, 'limit must be at least 1'),
      z.maximum(max, `limit must be at most ${max}`),
    );

/** `lookupOrPage`'s exclusive forms as JSON Schema keywords, for the document (`documented`). */
export function lookupOrPageKeywords(key: string): Record<string, unknown> {
  return { not: { anyOf: [requiredTogether(key, 'filters'), requiredTogether(key, 'cursor')] } };
}
