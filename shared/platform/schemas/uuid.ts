import * as z from 'zod/mini';

/** A UUID field, with errors that name it. */
export const uuid = (what: string) =>
  z.string({ error: `${what} must be a string` }).check(z.guid(`${what} must be a UUID`));
