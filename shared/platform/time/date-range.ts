import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import { parseDateWithOffset } from './format.ts';

/**
 * The `date_from` / `date_to` of a list filter as dates (the schemas have checked the shape; this
 * is the last guard): 107 when either is not ISO 8601 with an offset.
 */
export function dateRangeOf(filters: { date_from?: string; date_to?: string }): { from?: Date; to?: Date } {
  const from = filters.date_from === undefined ? undefined : parseDateWithOffset(filters.date_from);
  const to = filters.date_to === undefined ? undefined : parseDateWithOffset(filters.date_to);
  if (
    (filters.date_from !== undefined && from === undefined) ||
    (filters.date_to !== undefined && to === undefined)
  ) {
    throw new ServiceError(Code.InvalidInput, undefined, {
      details: [{ field: 'filters', message: 'date_from and date_to must be ISO 8601 with an offset' }],
    });
  }
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}
