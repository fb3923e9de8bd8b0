import * as z from 'zod/mini';

/** Registers a schema's description (and example) for the OpenAPI document, and returns the schema. */
export function describe<T extends z.ZodMiniType>(schema: T, description: string, example?: unknown): T {
  const meta: { description: string; example?: unknown } = { description };
  if (example !== undefined) meta.example = example;
  z.globalRegistry.add(schema, meta as never);
  return schema;
}

/**
 * Adds JSON Schema keywords to a schema's entry in the OpenAPI document, for a rule that a zod
 * refinement enforces and the generator cannot see (`uniqueItems`, an exclusive pair of fields, a
 * URL's scheme). The refinement stays the check; the keywords only say the same thing to callers
 * and to the contract fuzzer.
 */
export function documented<T extends z.ZodMiniType>(schema: T, keywords: Record<string, unknown>): T {
  z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), ...keywords } as never);
  return schema;
}

/**
 * `{required: names}` that also names the properties, for use inside `not`, where a linter (and a
 * reader) does not see the enclosing schema's properties.
 */
export function requiredTogether(...names: string[]): Record<string, unknown> {
  return { required: names, properties: Object.fromEntries(names.map((name) => [name, {}])) };
}
