import * as z from 'zod/mini';
import { isCalendarDateWithOffset } from '../time/format.ts';
import { describe } from './describe.ts';

/**
 * A date the service answers (shared/platform/time/format.ts `formatDate`): ISO 8601 with milliseconds and a
 * numeric offset in the server time zone, never `Z`. Response schemas use it, so the
 * OpenAPI document carries the pattern and the contract check of every test response enforces it.
 */
export const serverDatePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;

export const serverDate = (description: string, example = '2026-11-22T09:15:00.000+01:00') =>
  z
    .string()
    .check(z.regex(serverDatePattern, 'ISO 8601 with milliseconds and a numeric offset'))
    .register(z.globalRegistry, { description, example });

/** A date and time with no offset: the one mistake worth its own answer (which zone was meant?). */
const withoutOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/;

/** Why `value` is not ISO 8601 with an offset, in words that say what to add. */
export function dateShapeProblem(what: string, value: unknown): string {
  if (typeof value === 'string' && withoutOffset.test(value))
    return `${what} has no time-zone offset: add one, e.g. "${value}Z" (UTC) or "${value}+01:00"`;
  if (typeof value === 'string' && dateLike.test(value))
    return `${what} is not a real calendar date and time (e.g. 2026-02-30 does not exist)`;
  return `${what} must be ISO 8601 with an offset, e.g. "2026-11-22T09:15:00+01:00"`;
}

// Month, day, hour, minute, second and offset within their ranges, so the document's pattern
// already refuses most impossible dates (2026-13-01, 25:00); the calendar check below does the rest.
const incomingDateShape =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;
/** Looks like a date and time with an offset, whatever the numbers: then it is impossible, not malformed. */
const dateLike = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * A date a caller sends: ISO 8601 with an offset (`Z` included), and a day that exists on the
 * calendar (2026-02-30 is 107, not quietly March 2).
 */
export const incomingDate = (what: string, description = `${what}: ISO 8601 with an offset`) =>
  describe(
    z.string({ error: `${what} must be a string` }).check(
      z.regex(incomingDateShape, { error: (issue) => dateShapeProblem(what, issue.input) }),
      z.refine(
        (value) => !incomingDateShape.test(value) || isCalendarDateWithOffset(value),
        `${what} is not a real calendar date and time (e.g. 2026-02-30 does not exist)`,
      ),
    ),
    description,
    '2026-11-22T09:15:00+01:00',
  );
