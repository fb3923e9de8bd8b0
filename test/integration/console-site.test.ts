import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { consoleDistDir } from '../../console/build.ts';
import { hostInfo } from '../support/host.ts';

/*
 * The console's files on the local gateway at /console/: the built page, its config.json, its
 * security headers (the same policy CloudFront sets on AWS), caching, and nothing outside dist/.
 */
const info = hostInfo();
const consoleUrl = new URL('/console/', info.url);

function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(info.url), { path, method: 'GET' }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function policy(response: Response): Map<string, string> {
  const header = response.headers.get('content-security-policy') ?? '';
  return new Map(
    header.split(';').map((directive) => {
      const [name, ...values] = directive.trim().split(' ');
      return [name as string, values.join(' ')];
    }),
  );
}

describe('console on the local gateway', () => {
  it('serves the built page under a CSP that allows scripts from its own origin only', async () => {
    const response = await fetch(consoleUrl);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    const html = await response.text();
    assert.match(html, /<script type="module" crossorigin src="\.\/assets\/index-[\w-]+\.js"><\/script>/);
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    const csp = policy(response);
    assert.equal(csp.get('default-src'), "'none'");
    assert.equal(csp.get('script-src'), "'self'", 'no unsafe-inline, no unsafe-eval');
    assert.equal(
      csp.get('connect-src'),
      `'self' ${info.issuer}`,
      'the API (same origin) and the issuer only',
    );
    assert.equal(csp.get('frame-ancestors'), "'none'");
    assert.equal(csp.get('object-src'), "'none'");
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
  });

  it('serves config.json naming the API, the issuer, the OIDC client and the account claim', async () => {
    const response = await fetch(new URL('config.json', consoleUrl));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      api_url: '/',
      issuer: info.issuer,
      client_id: 'svc-mail-console',
      account_claim: 'sub',
    });
  });

  it('serves hashed assets as immutable and redirects /console to /console/', async () => {
    const script = readdirSync(join(consoleDistDir, 'assets')).find((name) => name.endsWith('.js')) as string;
    const asset = await fetch(new URL(`assets/${script}`, consoleUrl));
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const bare = await fetch(new URL('/console?x=1', info.url), { redirect: 'manual' });
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.get('location'), '/console/?x=1');
  });

  it('serves nothing outside the build and answers unknown files 404, writes 405', async () => {
    // Sent as written (fetch would normalise the dots away): encoded slashes reach the console's
    // file lookup, which must stay inside console/dist.
    for (const path of [
      '/console/assets/..%2f..%2f..%2fpackage.json',
      '/console/..%2fbuild.ts',
      '/console/%2e%2e%2fvite.config.ts',
    ]) {
      const response = await rawGet(path);
      assert.equal(response.status, 404, path);
      assert.doesNotMatch(response.body, /svc-mail|import/, path);
    }
    const missing = await fetch(new URL('assets/missing.js', consoleUrl));
    assert.equal(missing.status, 404);
    const post = await fetch(consoleUrl, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });
});
