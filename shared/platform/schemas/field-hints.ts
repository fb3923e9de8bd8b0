import type { $ZodType } from 'zod/v4/core';

/**
 * What to say about an unknown field of a request body, beyond "Unknown field": a wing registers
 * hints for its schema (e.g. where the `html` of another provider's API goes in a message), and
 * validation adds them to the detail of each unknown field that has one.
 */
export type UnknownFieldHint = (field: string, body: Record<string, unknown>) => string | undefined;

const hints = new WeakMap<$ZodType, UnknownFieldHint>();

export function registerUnknownFieldHint<T extends $ZodType>(schema: T, hint: UnknownFieldHint): T {
  hints.set(schema, hint);
  return schema;
}

export function unknownFieldHint(schema: $ZodType): UnknownFieldHint | undefined {
  return hints.get(schema);
}
