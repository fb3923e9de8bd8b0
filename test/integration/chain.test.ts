import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { type ApiResponse, call, hasNoInternals, mintToken, uniqueAccount } from '../support/host.ts';

/*
 * The checks after authentication (scopes 113, dry run 114, JSON 106, validation 107) and their
 * order, through the gateway on real routes:
 *   POST /keepalive-1.0 (keepalive:run, no dry run, no body),
 *   POST /domain/dkim/set-algorithm-1.0 (domains:write, JSON body),
 *   GET /avatar/get-1.0 (avatars:read, query `email` and `size`).
 */
function expectError(response: ApiResponse<any>, status: number, code: number): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.error.code, code, response.text);
  assert.ok(hasNoInternals(response.text), response.text);
}

const token = (scopes: string[]) => mintToken({ account: uniqueAccount('chain'), scopes });

describe('request checks after authentication', () => {
  it('answers 114 to ?dry_run=true on an authenticated endpoint without dry runs', async () => {
    const response = await call('POST', '/keepalive-1.0', {
      token: await token(['keepalive:run']),
      query: { dry_run: 'true' },
    });
    expectError(response, 406, 114);
    const allowed = await call('POST', '/keepalive-1.0', {
      token: await token(['keepalive:run']),
      query: { dry_run: 'false' },
    });
    assert.equal(allowed.status, 200, allowed.text);
  });

  it('answers 106 to a body that is not JSON', async () => {
    const writer = await token(['domains:write']);
    const broken = await call('POST', '/domain/dkim/set-algorithm-1.0', {
      token: writer,
      rawBody: '{"domain": "example.test", ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(broken, 400, 106);
    const wrongType = await call('POST', '/domain/dkim/set-algorithm-1.0', {
      token: writer,
      rawBody: 'domain=example.test',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(wrongType, 400, 106);
  });

  it('answers 107 with field details to a request that breaks the schema', async () => {
    const response = await call('GET', '/avatar/get-1.0', {
      token: await token(['avatars:read']),
      query: { size: '64' },
    });
    expectError(response, 406, 107);
    assert.ok(Array.isArray(response.body.error.details), response.text);
    assert.ok(
      response.body.error.details.some((detail: { field: string }) => detail.field === 'email'),
      response.text,
    );
  });

  it('answers 107 (HTTP 406) to a body over the 6 MB payload limit, before any function runs', async () => {
    const response = await call('POST', '/keepalive-1.0', { rawBody: 'x'.repeat(6 * 1024 * 1024 + 1) });
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    assert.match(response.body.error.details[0].message, /at most 6 MB/);
  });

  it('checks in the documented order: auth, then scope, then dry run, then JSON', async () => {
    const badJson = { rawBody: '{', headers: { 'content-type': 'application/json' } };
    const path = '/domain/dkim/set-algorithm-1.0';
    expectError(await call('POST', path, badJson), 401, 104);
    expectError(await call('POST', path, { ...badJson, token: await token(['domains:read']) }), 403, 113);
    const keepalive = await call('POST', '/keepalive-1.0', {
      token: await token(['domains:read']),
      query: { dry_run: 'true' },
    });
    expectError(keepalive, 403, 113);
    expectError(await call('POST', path, { ...badJson, token: await token(['domains:write']) }), 400, 106);
  });
});
