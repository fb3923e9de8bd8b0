import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, it } from 'vitest';
import { addressHash, cacheKey } from '../../shared/avatars/model/avatars.ts';
import { putAvatar } from '../../shared/avatars/store/avatar-cache.ts';
import { s3 } from '../../shared/platform/aws/clients.ts';
import { type FakeBehaviour, fakeGravatarPng, gravatarHits, setGravatar } from '../support/fake-gravatar.ts';
import { call, hostInfo, mintToken, uniqueAccount, useHostEnvironment } from '../support/host.ts';

const info = useHostEnvironment();
const offsetDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;
const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function uniqueAddress(prefix = 'jane.doe'): string {
  return `${prefix}.${randomUUID().slice(0, 8)}@example.com`;
}

async function reader(): Promise<string> {
  return mintToken({ account: uniqueAccount('avatar'), scopes: ['avatars:read'] });
}

/** An address whose hash the fake Gravatar answers with `behaviour`. */
async function addressWith(
  behaviour: FakeBehaviour,
  prefix?: string,
): Promise<{ email: string; hash: string }> {
  const email = uniqueAddress(prefix);
  const hash = addressHash(email);
  await setGravatar(info.gravatarControlUrl, hash, behaviour);
  return { email, hash };
}

async function getAvatar(token: string, query: Record<string, string>) {
  return call('GET', '/avatar/get-1.0', { token, query });
}

/** Fetches the presigned URL as any HTTP client would: no token, no SDK. */
async function download(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const response = await fetch(url);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

function pngWidth(bytes: Buffer): number {
  assert.ok(bytes.subarray(0, 8).equals(pngSignature), 'a PNG');
  return bytes.readUInt32BE(16);
}

async function exists(key: string): Promise<boolean> {
  try {
    await s3().send(new HeadObjectCommand({ Bucket: info.env.BUCKET_NAME, Key: key }));
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'NotFound') return false;
    throw error;
  }
}

describe('GET /avatar/get-1.0', () => {
  it('serves the Gravatar image through a presigned URL that a plain HTTP client can fetch', async () => {
    const token = await reader();
    const { email, hash } = await addressWith('image');
    const response = await getAvatar(token, { email: `  ${email.toUpperCase()} `, size: '128' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const data = response.body.data;
    assert.equal(data.email, email);
    assert.equal(data.content_type, 'image/png');
    assert.equal(data.source, 'fresh');
    assert.match(data.expires_at, offsetDate);
    assert.ok(Date.parse(data.expires_at) > Date.now());

    const seen = await gravatarHits(info.gravatarControlUrl, hash);
    assert.equal(seen.hits, 1);
    assert.deepEqual({ s: seen.last_query.s, d: seen.last_query.d }, { s: '128', d: '404' });

    const image = await download(data.url);
    assert.equal(image.status, 200);
    assert.equal(image.type, 'image/png');
    assert.ok(image.bytes.equals(fakeGravatarPng), 'the bytes Gravatar served');
  });

  it('generates an initials image when Gravatar has none (404)', async () => {
    const token = await reader();
    const { email, hash } = await addressWith('missing', 'ada.lovelace');
    const response = await getAvatar(token, { email, size: '64' });
    assert.equal(response.status, 200);
    assert.equal(response.body.data.content_type, 'image/png');
    assert.equal(response.body.data.source, 'fresh');
    assert.equal((await gravatarHits(info.gravatarControlUrl, hash)).hits, 1);
    const image = await download(response.body.data.url);
    assert.equal(image.status, 200);
    assert.equal(pngWidth(image.bytes), 64);
    assert.ok(!image.bytes.equals(fakeGravatarPng));
  });

  it('uses 80 pixels when no size is given', async () => {
    const { email, hash } = await addressWith('missing');
    const response = await getAvatar(await reader(), { email });
    assert.equal(response.status, 200);
    assert.equal((await gravatarHits(info.gravatarControlUrl, hash)).last_query.s, '80');
    assert.equal(pngWidth((await download(response.body.data.url)).bytes), 80);
  });

  it('answers from the cache on the second call without asking Gravatar again', async () => {
    const token = await reader();
    const { email, hash } = await addressWith('image');
    const first = await getAvatar(token, { email, size: '100' });
    const second = await getAvatar(token, { email, size: '100' });
    assert.equal(first.body.data.source, 'fresh');
    assert.equal(second.status, 200);
    assert.equal(second.body.data.source, 'cache');
    assert.equal(second.body.data.content_type, 'image/png');
    assert.equal((await gravatarHits(info.gravatarControlUrl, hash)).hits, 1);
    assert.ok((await download(second.body.data.url)).bytes.equals(fakeGravatarPng));

    // Another size is another entry.
    const other = await getAvatar(token, { email, size: '200' });
    assert.equal(other.body.data.source, 'fresh');
    assert.equal((await gravatarHits(info.gravatarControlUrl, hash)).hits, 2);
  });

  it('gives the same answer shape whether or not the address has an avatar', async () => {
    const token = await reader();
    const withAvatar = await getAvatar(token, { email: (await addressWith('image')).email });
    const without = await getAvatar(token, { email: (await addressWith('missing')).email });
    assert.equal(withAvatar.status, 200);
    assert.equal(without.status, 200);
    const shape = (data: Record<string, unknown>) =>
      Object.entries(data)
        .map(([key, value]) => `${key}:${typeof value}`)
        .sort();
    assert.deepEqual(Object.keys(withAvatar.body), ['data']);
    assert.deepEqual(Object.keys(without.body), ['data']);
    assert.deepEqual(shape(withAvatar.body.data), shape(without.body.data));
    assert.deepEqual(shape(without.body.data), [
      'content_type:string',
      'email:string',
      'expires_at:string',
      'source:string',
      'url:string',
    ]);
    // Nothing in the JSON says which one had an avatar.
    assert.equal(withAvatar.body.data.source, without.body.data.source);
    assert.equal(withAvatar.body.data.content_type, without.body.data.content_type);
    assert.doesNotMatch(JSON.stringify(withAvatar.body), /gravatar|generated/i);
    assert.doesNotMatch(JSON.stringify(without.body), /gravatar|generated/i);
  });

  for (const behaviour of ['slow', 'down', 'error'] as const) {
    it(`falls back to the generated image when Gravatar is ${behaviour}, never a 5xx`, async () => {
      const { email, hash } = await addressWith(behaviour);
      const started = Date.now();
      const response = await getAvatar(await reader(), { email, size: '48' });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.data.source, 'fresh');
      assert.equal((await gravatarHits(info.gravatarControlUrl, hash)).hits, 1);
      assert.equal(pngWidth((await download(response.body.data.url)).bytes), 48);
      // Cached for the short fallback lifetime (300 s), not the full day, so the real image returns soon.
      assert.ok(Date.parse(response.body.data.expires_at) <= started + 301_000);
    });
  }

  it('keeps the address and its hash out of the service log, even when Gravatar fails', async () => {
    const { email, hash } = await addressWith('down');
    const response = await getAvatar(await reader(), { email });
    assert.equal(response.status, 200);
    const logged = readFileSync(hostInfo().logFile, 'utf8');
    assert.match(logged, /gravatar unavailable/);
    assert.equal(logged.includes(email), false);
    assert.equal(logged.includes(hash), false);
  });

  it('looks the address up again when its cache entry has expired', async () => {
    const token = await reader();
    const { email, hash } = await addressWith('image');
    const stale = Buffer.from('stale entry');
    await putAvatar({
      key: cacheKey(hash, 80),
      contentType: 'image/gif',
      bytes: stale,
      expiresAt: new Date(Date.now() - 60_000),
      origin: 'gravatar',
    });
    const response = await getAvatar(token, { email });
    assert.equal(response.status, 200);
    assert.equal(response.body.data.source, 'fresh');
    assert.equal(response.body.data.content_type, 'image/png');
    assert.equal((await gravatarHits(info.gravatarControlUrl, hash)).hits, 1);
    assert.ok((await download(response.body.data.url)).bytes.equals(fakeGravatarPng));
  });

  // Refused addresses (10000001), a missing one (107) and refused sizes (10010001) are unit tests of
  // the route's chain with no server: test/unit/route-input.test.ts.
  it('serves the smallest and the largest size', async () => {
    const token = await reader();
    const email = uniqueAddress();
    for (const size of ['16', '512']) {
      assert.equal((await getAvatar(token, { email, size })).status, 200, `size ${size}`);
    }
  });

  it('needs a token (104) with avatars:read (113)', async () => {
    const email = uniqueAddress();
    const anonymous = await call('GET', '/avatar/get-1.0', { query: { email } });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error.code, 104);
    const token = await mintToken({ account: uniqueAccount(), scopes: ['messages:read'] });
    const forbidden = await getAvatar(token, { email });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, 113);
  });
});

describe('POST /keepalive-1.0', () => {
  it('needs a token (104) with keepalive:run (113)', async () => {
    const anonymous = await call('POST', '/keepalive-1.0');
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error.code, 104);
    const token = await mintToken({ account: uniqueAccount(), scopes: ['avatars:read'] });
    const forbidden = await call('POST', '/keepalive-1.0', { token });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, 113);
  });

  it('removes exactly the expired cache entries and reports what it did', async () => {
    const now = Date.now();
    const entry = (minutes: number) => ({
      key: cacheKey(addressHash(uniqueAddress()), 80),
      expiresAt: new Date(now + minutes * 60_000),
    });
    const expired = [entry(-1), entry(-60), entry(-24 * 60)];
    const fresh = [entry(10), entry(24 * 60)];
    for (const { key, expiresAt } of [...expired, ...fresh]) {
      await putAvatar({
        key,
        expiresAt,
        contentType: 'image/png',
        bytes: fakeGravatarPng,
        origin: 'generated',
      });
    }
    // An entry whose expiry cannot be read is treated as expired.
    const unreadable = cacheKey(addressHash(uniqueAddress()), 80);
    await s3().send(
      new PutObjectCommand({
        Bucket: info.env.BUCKET_NAME,
        Key: unreadable,
        Body: 'x',
        Metadata: { 'expires-at': 'soon' },
      }),
    );

    const token = await mintToken({ account: uniqueAccount('ops'), scopes: ['keepalive:run'] });
    const response = await call('POST', '/keepalive-1.0', { token });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(Object.keys(response.body.data).sort(), ['examined', 'remaining', 'removed', 'resumed']);
    assert.equal(response.body.data.remaining, false);
    assert.ok(response.body.data.examined >= 6);
    assert.ok(response.body.data.removed >= 4);

    for (const { key } of expired) assert.equal(await exists(key), false, `${key} removed`);
    assert.equal(await exists(unreadable), false);
    for (const { key } of fresh) assert.equal(await exists(key), true, `${key} kept`);
  });

  it('keeps GET /keepalive-1.0 public and cheap', async () => {
    const response = await call('GET', '/keepalive-1.0');
    assert.equal(response.status, 200);
    assert.equal(response.body.data.status, 'alive');
    assert.equal(hostInfo().url.length > 0, true);
  });
});
