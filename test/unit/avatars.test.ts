import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import {
  addressHash,
  cacheKey,
  colourOf,
  entryLifetimeSeconds,
  expiredByAge,
  initialsOf,
  isFresh,
  parseExpiry,
  parseSize,
  sizePattern,
  urlLifetimeSeconds,
} from '../../shared/avatars/model/avatars.ts';
import { renderInitials } from '../../shared/avatars/model/initials-image.ts';
import { avatarGetRequest } from '../../shared/avatars/schemas.ts';
import { validationError } from '../../shared/platform/middleware/validate-input.ts';

describe('avatar identity', () => {
  it('hashes the trimmed, lower-cased address with SHA-256 (Gravatar’s form)', () => {
    // echo -n "jane.doe@example.com" | sha256sum
    assert.equal(
      addressHash(' Jane.Doe@Example.COM '),
      '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d',
    );
    assert.equal(cacheKey('ab', 80), 'avatars/ab/80');
  });

  it('accepts sizes 16–512 written as plain digits, defaulting to 80', () => {
    assert.equal(parseSize(undefined), 80);
    assert.equal(parseSize('16'), 16);
    assert.equal(parseSize('512'), 512);
    assert.equal(parseSize('080'), 80);
    for (const bad of ['15', '513', '', '80.0', '1e2', '-16', ' 80', '0x20', '99999']) {
      assert.equal(parseSize(bad), undefined, bad);
    }
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 5000 }), (n) => {
        const parsed = parseSize(String(n));
        assert.equal(parsed, n >= 16 && n <= 512 ? n : undefined);
      }),
    );
  });

  it('takes up to two initials from the local part', () => {
    assert.equal(initialsOf('jane.doe@example.com'), 'JD');
    assert.equal(initialsOf('Ada_Lovelace+news@example.com'), 'AL');
    assert.equal(initialsOf('bob@example.com'), 'B');
    assert.equal(initialsOf('9lives@example.com'), '9');
    assert.equal(initialsOf('...@example.com'), '?');
    assert.equal(initialsOf('élodie@example.com'), 'L');
  });

  it('derives a stable colour from the hash', () => {
    const hash = addressHash('jane.doe@example.com');
    assert.deepEqual(colourOf(hash), colourOf(hash));
    assert.notDeepEqual(colourOf('0000'), colourOf('00b4'));
    for (const channel of colourOf(hash)) assert.ok(channel >= 0 && channel <= 255);
  });
});

describe('avatar expiry', () => {
  const now = new Date('2026-11-22T10:00:00Z');

  it('caches Gravatar failures briefly and everything else for the full TTL', () => {
    assert.equal(entryLifetimeSeconds('found', 86_400, 300), 86_400);
    assert.equal(entryLifetimeSeconds('absent', 86_400, 300), 86_400);
    assert.equal(entryLifetimeSeconds('failed', 86_400, 300), 300);
    assert.equal(entryLifetimeSeconds('failed', 60, 300), 60);
  });

  it('never lets a URL outlive its entry nor the URL lifetime', () => {
    assert.equal(urlLifetimeSeconds(new Date(now.getTime() + 86_400_000), now, 3600), 3600);
    assert.equal(urlLifetimeSeconds(new Date(now.getTime() + 120_000), now, 3600), 120);
    assert.equal(urlLifetimeSeconds(new Date(now.getTime() + 10), now, 3600), 1);
  });

  it('reads the expiry metadata strictly', () => {
    assert.deepEqual(parseExpiry('1795341600'), new Date(1_795_341_600_000));
    for (const bad of [undefined, '', 'soon', '-1', '1.5']) assert.equal(parseExpiry(bad), undefined);
    assert.equal(isFresh(undefined, now), false);
    assert.equal(isFresh(new Date(now.getTime() + 1), now), true);
    assert.equal(isFresh(now, now), false);
  });

  it('knows from the listing alone that an entry older than the TTL has expired', () => {
    assert.equal(expiredByAge(new Date(now.getTime() - 86_400_000), now, 86_400), true);
    assert.equal(expiredByAge(new Date(now.getTime() - 60_000), now, 86_400), undefined);
    assert.equal(expiredByAge(undefined, now, 86_400), undefined);
  });
});

describe('generated initials image', () => {
  for (const size of [16, 80, 512]) {
    it(`is a valid ${size} × ${size} palette PNG`, () => {
      const png = Buffer.from(renderInitials('JD', size, [200, 40, 90]));
      assert.ok(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])));
      assert.equal(png.toString('latin1', 12, 16), 'IHDR');
      assert.equal(png.readUInt32BE(16), size);
      assert.equal(png.readUInt32BE(20), size);
      const idatAt = png.indexOf('IDAT', 0, 'latin1');
      const idatLength = png.readUInt32BE(idatAt - 4);
      const pixels = inflateSync(png.subarray(idatAt + 4, idatAt + 4 + idatLength));
      assert.equal(pixels.length, size * (size + 1));
      // Some text pixels (index 1), mostly background (index 0).
      const ink = pixels.filter((value, index) => index % (size + 1) !== 0 && value === 1).length;
      assert.ok(ink > 0 && ink < (size * size) / 2);
    });
  }
});

describe('avatar query validation', () => {
  const codeOf = (query: Record<string, string>) => {
    const result = avatarGetRequest.safeParse(query);
    return result.success ? 'ok' : validationError(result.error.issues as never).code;
  };

  it('maps address problems to 10000001 and size problems to 10010001', () => {
    assert.equal(codeOf({ email: 'a@example.com' }), 'ok');
    assert.equal(codeOf({ email: 'nope' }), 10000001);
    assert.equal(codeOf({ email: 'a@example.com', size: '8' }), 10010001);
    // Both wrong: the address wins; details still list both.
    assert.equal(codeOf({ email: 'nope', size: '8' }), 10000001);
    assert.equal(codeOf({}), 107);
  });

  it('normalises the address and defaults the size', () => {
    assert.deepEqual(avatarGetRequest.parse({ email: '  Jane@Example.COM ' }), {
      email: 'jane@example.com',
      size: 80,
    });
  });
});

describe('the documented size pattern', () => {
  it('accepts exactly what parseSize accepts, for every value of up to four digits and more', () => {
    const pattern = new RegExp(sizePattern);
    const values = ['', '-1', '1e2', ' 80', '80 ', '00016', '016', '0016', '0512', '0513', '12345'];
    for (let size = 0; size <= 9999; size++) {
      values.push(String(size), String(size).padStart(3, '0'), String(size).padStart(4, '0'));
    }
    for (const value of values)
      assert.equal(pattern.test(value), parseSize(value) !== undefined && value !== '', value);
  });
});
