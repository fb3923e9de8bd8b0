import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { call, hasNoInternals, mintToken, uniqueAccount, useHostEnvironment } from '../support/host.ts';

/**
 * Housekeeping with S3 unreachable. The shared host's S3 works, so this file runs a second gateway
 * in its own process — the same gateway code and handler modules — whose functions see an S3
 * endpoint that drops every connection. Everything else (identity provider, tokens) is the shared
 * host's. Requests still go over HTTP through the gateway and the full middleware chain, and every
 * answer is checked against docs/openapi.json by `call()`.
 */
const info = useHostEnvironment();
const deadS3 = createServer((socket) => socket.destroy());
let gatewayUrl = '';
let closeGateway: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  await new Promise<void>((resolve) => deadS3.listen(0, '127.0.0.1', resolve));
  const address = deadS3.address();
  process.env.AWS_ENDPOINT_URL_S3 = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  // Imported only now: handlers and SDK clients read their configuration when first loaded.
  const { startGateway } = await import('../../infra/local/gateway.ts');
  const gateway = await startGateway('127.0.0.1', 0);
  gatewayUrl = gateway.url;
  closeGateway = async () => {
    gateway.server.closeAllConnections();
    await new Promise<void>((resolve) => gateway.server.close(() => resolve()));
  };
});

afterAll(async () => {
  await closeGateway();
  await new Promise<void>((resolve) => deadS3.close(() => resolve()));
});

function post(path: string, token?: string) {
  return call('POST', path, { baseUrl: gatewayUrl, ...(token === undefined ? {} : { token }) });
}

describe('GET /avatar/get-1.0 when S3 is unreachable', () => {
  it('answers 503 with code 4 (storage unavailable), not a bare 500', async () => {
    const token = await mintToken({ account: uniqueAccount('avatar'), scopes: ['avatars:read'] });
    const response = await call('GET', '/avatar/get-1.0', {
      baseUrl: gatewayUrl,
      token,
      query: { email: 'someone@example.com' },
    });
    assert.equal(response.status, 503, response.text);
    assert.equal(response.body.error.code, 4);
    assert.ok(hasNoInternals(response.text));
  });
});

describe('POST /keepalive-1.0 when S3 is unreachable', () => {
  it('answers 500 with code 10020001 and no internals', async () => {
    const token = await mintToken({ account: uniqueAccount('ops'), scopes: ['keepalive:run'] });
    const response = await post('/keepalive-1.0', token);
    assert.equal(response.status, 500, response.text);
    assert.equal(response.body.error.code, 10020001);
    assert.ok(hasNoInternals(response.text));
    assert.doesNotMatch(response.text, /ECONNRESET|127\.0\.0\.1|socket/i);
    assert.ok(info.url.length > 0);
  });
});
