import fc from 'fast-check';

/**
 * JSON Schema (the OpenAPI 3.0 subset docs/openapi.json uses) → fast-check arbitraries, for the
 * contract fuzzer (test/integration/contract-fuzz.test.ts): `validValue` produces values the schema
 * accepts, as far as it can say; `invalidValue` produces values it refuses (a required field left
 * out, an unknown field, a wrong type, or any JSON). Sizes are kept small on purpose: the fuzzer
 * looks for answers outside the contract, not for the limits (the hostile-input tests do those).
 */
export type Schema = {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  minProperties?: number;
  maxProperties?: number;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  not?: Schema;
  default?: unknown;
  example?: unknown;
};

export interface SchemaDocument {
  components?: { schemas?: Record<string, Schema> };
}

const maxDepth = 6;
const smallCount = 3;

function resolve(schema: Schema, document: SchemaDocument): Schema {
  let current = schema;
  for (let hops = 0; current.$ref !== undefined && hops < 10; hops++) {
    const name = current.$ref.replace('#/components/schemas/', '');
    const target = document.components?.schemas?.[name];
    if (target === undefined) throw new Error(`unresolved ${current.$ref}`);
    const { $ref: _ref, ...rest } = current;
    current = { ...target, ...rest };
  }
  return current;
}

/** Branches that only add constraints (`{required: […]}`) to the schema around them. */
function isConstraintOnly(branch: Schema): boolean {
  return branch.type === undefined && branch.$ref === undefined && branch.enum === undefined;
}

function merge(base: Schema, extra: Schema): Schema {
  return {
    ...base,
    ...extra,
    type: base.type ?? extra.type,
    properties: { ...base.properties, ...extra.properties },
    required: [...new Set([...(base.required ?? []), ...(extra.required ?? [])])],
  };
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? min + 24, min + 24);
  const fits = (value: string) =>
    value.length >= min && (schema.maxLength === undefined || value.length <= schema.maxLength);
  if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern);
    try {
      return fc.stringMatching(pattern).filter(fits);
    } catch {
      // fast-check cannot generate from every regular expression (lookahead): the documented
      // example, which the contract test already holds to the pattern.
      return typeof schema.example === 'string'
        ? fc.constant(schema.example)
        : fc.string().filter((value) => pattern.test(value));
    }
  }
  switch (schema.format) {
    case 'email':
      return fc.emailAddress().filter(fits);
    case 'uri':
      return fc.webUrl().filter(fits);
    case 'date-time':
      return fc
        .date({
          min: new Date('2000-01-01T00:00:00Z'),
          max: new Date('2100-01-01T00:00:00Z'),
          noInvalidDate: true,
        })
        .map((date) => date.toISOString());
    case 'uuid':
      return fc.uuid();
    default:
      return fc.string({ minLength: min, maxLength: max });
  }
}

function numberArbitrary(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const exclusiveMin = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
  const exclusiveMax = typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum : undefined;
  let min = schema.minimum ?? (exclusiveMin === undefined ? -1_000_000 : exclusiveMin + 1);
  let max = schema.maximum ?? (exclusiveMax === undefined ? 1_000_000 : exclusiveMax - 1);
  if (schema.exclusiveMinimum === true) min += 1;
  if (schema.exclusiveMaximum === true) max -= 1;
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function objectArbitrary(schema: Schema, document: SchemaDocument, depth: number): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const names = Object.keys(properties);
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of names) shape[name] = validValue(properties[name] as Schema, document, depth + 1);
  const known = fc.record(shape, { requiredKeys: names.filter((name) => required.has(name)) });
  const extra = schema.additionalProperties;
  if (names.length > 0 || extra === undefined || extra === false) return known;
  // A map (`additionalProperties: schema`): a few keys, within minProperties/maxProperties.
  const values = extra === true ? fc.jsonValue({ maxDepth: 1 }) : validValue(extra, document, depth + 1);
  const keys =
    schema.propertyNames === undefined
      ? fc.string({ minLength: 1, maxLength: 12 })
      : stringArbitrary(schema.propertyNames);
  return fc.dictionary(keys, values, {
    minKeys: schema.minProperties ?? 0,
    maxKeys: Math.min(schema.maxProperties ?? smallCount, smallCount),
  });
}

/** Values `schema` accepts (`not` is not honoured: the server answers those with 4xx, as it should). */
export function validValue(raw: Schema, document: SchemaDocument, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw, document);
  const value = plainValue(schema, document, depth);
  return schema.nullable === true ? fc.option(value, { nil: null, freq: 8 }) : value;
}

function plainValue(schema: Schema, document: SchemaDocument, depth: number): fc.Arbitrary<unknown> {
  if (depth > maxDepth) return fc.constant(null);
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.allOf !== undefined && schema.allOf.length > 0) {
    const merged = schema.allOf.reduce((all, part) => merge(all, resolve(part, document)), {
      ...schema,
      allOf: undefined,
    } as Schema);
    return plainValue(merged, document, depth);
  }
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches !== undefined && branches.length > 0) {
    const { oneOf: _one, anyOf: _any, ...base } = schema;
    return fc.oneof(
      ...branches.map((branch) =>
        isConstraintOnly(branch)
          ? plainValue(merge(base, branch), document, depth)
          : validValue(branch, document, depth),
      ),
    );
  }
  switch (schema.type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return numberArbitrary(schema, true);
    case 'number':
      return numberArbitrary(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const min = schema.minItems ?? 0;
      const max = Math.min(schema.maxItems ?? min + smallCount, min + smallCount);
      const items = validValue(schema.items ?? {}, document, depth + 1);
      return schema.uniqueItems === true
        ? fc.uniqueArray(items, { minLength: min, maxLength: max, selector: (item) => JSON.stringify(item) })
        : fc.array(items, { minLength: min, maxLength: max });
    }
    case 'object':
      return objectArbitrary(schema, document, depth);
    default:
      return schema.properties === undefined
        ? fc.jsonValue({ maxDepth: 2 })
        : objectArbitrary(schema, document, depth);
  }
}

const anyJson = fc.jsonValue({ maxDepth: 2 });

/** A value of another JSON type than `schema` says. */
function wrongType(schema: Schema): fc.Arbitrary<unknown> {
  const others: fc.Arbitrary<unknown>[] = [];
  if (schema.type !== 'string') others.push(fc.string({ maxLength: 8 }));
  if (schema.type !== 'integer' && schema.type !== 'number') others.push(fc.integer());
  if (schema.type !== 'boolean') others.push(fc.boolean());
  if (schema.type !== 'array') others.push(fc.array(fc.integer(), { maxLength: 2 }));
  if (schema.type !== 'object')
    others.push(fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }));
  if (schema.nullable !== true) others.push(fc.constant(null));
  return fc.oneof(...others);
}

/** Values `schema` refuses (or, for the catch-all, any JSON at all). */
export function invalidValue(raw: Schema, document: SchemaDocument): fc.Arbitrary<unknown> {
  const schema = resolve(raw, document);
  const mutations: fc.Arbitrary<unknown>[] = [anyJson, wrongType(schema)];
  const properties = schema.properties ?? {};
  const names = Object.keys(properties);
  if (names.length > 0) {
    const valid = validValue(schema, document) as fc.Arbitrary<Record<string, unknown>>;
    const required = schema.required ?? [];
    if (required.length > 0) {
      mutations.push(
        fc.tuple(valid, fc.constantFrom(...required)).map(([value, name]) => {
          const { [name]: _dropped, ...rest } = value;
          return rest;
        }),
      );
    }
    if (schema.additionalProperties === false) {
      mutations.push(
        fc
          .tuple(valid, fc.stringMatching(/^[a-z_]{1,12}$/), anyJson)
          .filter(([, name]) => !names.includes(name))
          .map(([value, name, extra]) => ({ ...value, [name]: extra })),
      );
    }
    mutations.push(
      fc.tuple(valid, fc.constantFrom(...names)).chain(([value, name]) =>
        wrongType(resolve(properties[name] as Schema, document)).map((wrong) => ({
          ...value,
          [name]: wrong,
        })),
      ),
    );
  }
  return fc.oneof(...mutations);
}
