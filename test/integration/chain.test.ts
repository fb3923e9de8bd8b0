import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { type ApiResponse, call, hasNoInternals, mintToken, uniqueAccount } from '../support/host.ts';

/*
 * The checks after authentication through the gateway, with tokens the local identity provider
 * signed and the verifier checks against its JWKS: that a verified token's scopes reach the chain,
 * and the order of the checks, on real routes:
 *   POST /keepalive-1.0 (keepalive:run, no dry run, no body),
 *   POST /domain/dkim/set-algorithm-1.0 (domains:write, JSON body).
 * Each check on its own (103, 104, 106, 107 and its details, 10000001, 113, 114, 115, code 2, the
 * envelope's headers) is a unit test with an event and no server: test/unit/http-chain.test.ts.
 */
function expectError(response: ApiResponse<any>, status: number, code: number): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.error.code, code, response.text);
  assert.ok(hasNoInternals(response.text), response.text);
}

const token = (scopes: string[]) => mintToken({ account: uniqueAccount('chain'), scopes });

describe('request checks after authentication', () => {
  it('answers 107 (HTTP 406) to a body over the 6 MB payload limit, before any function runs', async () => {
    const response = await call('POST', '/keepalive-1.0', { rawBody: 'x'.repeat(6 * 1024 * 1024 + 1) });
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    assert.match(response.body.error.details[0].message, /at most 6 MB/);
  });

  it('checks a verified token in the documented order: auth, then scope, then dry run, then JSON', async () => {
    const badJson = { rawBody: '{', headers: { 'content-type': 'application/json' } };
    const path = '/domain/dkim/set-algorithm-1.0';
    expectError(await call('POST', path, badJson), 401, 104);
    expectError(await call('POST', path, { ...badJson, token: await token(['domains:read']) }), 403, 113);
    const keepalive = await call('POST', '/keepalive-1.0', {
      token: await token(['domains:read']),
      query: { dry_run: 'true' },
    });
    expectError(keepalive, 403, 113);
    const dryRun = await call('POST', '/keepalive-1.0', {
      token: await token(['keepalive:run']),
      query: { dry_run: 'true' },
    });
    expectError(dryRun, 406, 114);
    expectError(await call('POST', path, { ...badJson, token: await token(['domains:write']) }), 400, 106);
  });
});
