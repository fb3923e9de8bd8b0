import * as z from 'zod/mini';

/** Registers a schema's description (and example) for the OpenAPI document, and returns the schema. */
export function describe<T extends z.ZodMiniType>(schema: T, description: string, example?: unknown): T {
  const meta: { description: string; example?: unknown } = { description };
  if (example !== undefined) meta.example = example;
  z.globalRegistry.add(schema, meta as never);
  return schema;
}
