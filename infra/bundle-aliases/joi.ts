/**
 * Bundle alias for `joi` (infra/bundling.ts; 145 KB of the sender). mailauth's shared tools module
 * builds one schema when it loads, `Joi.string().base64({ paddingRequired: false })`, and uses it
 * only to check a DKIM public-key record while verifying, which the sender never does. This module
 * provides exactly that schema, with Joi's rule for unpadded base64, and fails loudly for anything else.
 */
const unpaddedBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

interface ValidationResult {
  value: unknown;
  error?: Error;
}

class Base64Schema {
  validate(value: unknown): ValidationResult {
    if (value === '') return { value, error: new Error('"value" is not allowed to be empty') };
    if (typeof value === 'string' && unpaddedBase64.test(value)) return { value };
    return { value, error: new Error('"value" must be a valid base64 string') };
  }
}

class StringSchema {
  base64(options: { paddingRequired?: boolean } = {}): Base64Schema {
    if (options.paddingRequired !== false) throw new Error('Only unpadded base64 schemas are bundled');
    return new Base64Schema();
  }
}

export function string(): StringSchema {
  return new StringSchema();
}

export default { string };
