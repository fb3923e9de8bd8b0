import * as z from 'zod/mini';

/**
 * A date the service answers (shared/time/format.ts `formatDate`): ISO 8601 with milliseconds and a
 * numeric offset in the server time zone, never `Z` (DESIGN.md 3). Response schemas use it, so the
 * OpenAPI document carries the pattern and the contract check of every test response enforces it.
 */
export const serverDatePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;

export const serverDate = (description: string, example = '2026-11-22T09:15:00.000+01:00') =>
  z
    .string()
    .check(z.regex(serverDatePattern, 'ISO 8601 with milliseconds and a numeric offset'))
    .register(z.globalRegistry, { description, example });
