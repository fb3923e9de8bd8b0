import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import * as z from 'zod/mini';
import type { $ZodIssue } from 'zod/v4/core';
import { Code } from '../../shared/platform/errors/catalogue.ts';
import { checkInput, fieldName, validationError } from '../../shared/platform/middleware/validate-input.ts';

function issuesOf(schema: z.ZodMiniType, value: unknown): $ZodIssue[] {
  const result = schema.safeParse(value);
  assert.equal(result.success, false);
  return result.error?.issues as $ZodIssue[];
}

describe('field names from zod paths', () => {
  it('writes keys with dots and indexes in brackets', () => {
    assert.equal(fieldName(['to', 1]), 'to[1]');
    assert.equal(fieldName(['attachments', 0, 'filename']), 'attachments[0].filename');
    assert.equal(fieldName(['content', 'html']), 'content.html');
    assert.equal(fieldName([0]), '[0]');
    assert.equal(fieldName(['headers', 'X-Custom']), 'headers.X-Custom');
  });

  it('names the whole body when the path is empty', () => {
    assert.equal(fieldName([]), '(body)');
  });
});

describe('validation errors', () => {
  const schema = z.object({
    to: z.array(z.email()),
    subject: z.string().check(z.minLength(1)),
    limit: z.optional(z.number().check(z.maximum(1000))),
  });

  it('is 107 with one detail per problem when no address is involved', () => {
    const error = validationError(issuesOf(schema, { to: [], subject: '', limit: 5000 }));
    assert.equal(error.code, Code.InvalidInput);
    assert.equal(error.status, 406);
    assert.deepEqual(
      error.details?.map((detail) => detail.field),
      ['subject', 'limit'],
    );
  });

  it('is 10000001 when any address is invalid, and still lists every problem', () => {
    const error = validationError(
      issuesOf(schema, { to: ['ok@example.test', 'not-an-address'], subject: '' }),
    );
    assert.equal(error.code, Code.InvalidEmail);
    assert.deepEqual(
      error.details?.map((detail) => detail.field),
      ['to[1]', 'subject'],
    );
  });

  it('is 10000001 for a custom issue that carries the catalogue code', () => {
    const sender = z.string().check(
      z.refine((value) => value.includes('@'), {
        params: { catalogueCode: Code.InvalidEmail },
        message: 'Not an address',
      }),
    );
    const error = validationError(
      issuesOf(z.object({ message_sender: sender }), { message_sender: 'nobody' }),
    );
    assert.equal(error.code, Code.InvalidEmail);
    assert.deepEqual(error.details, [{ field: 'message_sender', message: 'Not an address' }]);
  });

  it('names a missing body field and a wrong type', () => {
    const error = validationError(issuesOf(schema, 'not an object'));
    assert.equal(error.code, Code.InvalidInput);
    assert.equal(error.details?.[0]?.field, '(body)');
  });
});

describe('a check that runs out of stack', () => {
  it('is 107 on the body, never 9 or a 500', () => {
    const exhausting = z.custom<string>(() => {
      throw new RangeError('Maximum call stack size exceeded');
    });
    const checked = checkInput(exhausting, 'x');
    assert.ok('error' in checked);
    assert.equal(checked.error.code, Code.InvalidInput);
    assert.deepEqual(checked.error.details, [
      { field: '(body)', message: 'Too deeply nested or too large to check; send a smaller input' },
    ]);
  });
});
