import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import { isBase64 } from '../../shared/platform/schemas/base64.ts';

describe('isBase64', () => {
  it('accepts padded base64 of every length, the empty string included', () => {
    for (let length = 0; length < 12; length++) assert.ok(isBase64(randomBytes(length).toString('base64')));
    assert.ok(isBase64('+/+/'));
  });

  it('refuses a wrong length, a foreign character, misplaced or excess padding, and base64url', () => {
    for (const value of ['abc', 'ab=c', 'a===', '====', 'ab c', 'abc\n', '-_ab', 'ab==ab==', 'é123'])
      assert.equal(isBase64(value), false, value);
  });

  it('checks 8 MB without a regular expression (no stack overflow)', () => {
    const big = randomBytes(6_000_000).toString('base64');
    assert.ok(isBase64(big));
    assert.equal(isBase64(`${big.slice(0, -4)}!AAA`), false);
  });
});
