import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { call, hasNoInternals } from '../support/host.ts';

describe('local gateway rules', () => {
  it('answers an unknown path with 404 and code 100', async () => {
    const response = await call('GET', '/no/such/endpoint');
    assert.equal(response.status, 404);
    assert.equal(response.body.error.code, 100);
    assert.ok(response.headers.get('x-request-id'));
  });

  it('answers a wrong method on a known path with 405 and code 102', async () => {
    const response = await call('DELETE', '/health');
    assert.equal(response.status, 405);
    assert.equal(response.body.error.code, 102);
    assert.match(response.headers.get('allow') ?? '', /GET/);
  });

  it('answers OPTIONS with 202, code 101 and CORS headers', async () => {
    const response = await call('OPTIONS', '/message/add-1.0', {
      headers: { origin: 'https://app.example' },
    });
    assert.equal(response.status, 202);
    assert.equal(response.body.error.code, 101);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.match(response.headers.get('access-control-allow-methods') ?? '', /POST/);
  });

  it('serves GET /health with the caller address from the connection, not a forwarded header', async () => {
    const response = await call('GET', '/health', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { data: { status: 'ok', caller_ip: '127.0.0.1' } });
    assert.ok(hasNoInternals(response.text));
  });

  it('serves GET /keepalive-1.0 publicly with an offset timestamp', async () => {
    const response = await call('GET', '/keepalive-1.0');
    assert.equal(response.status, 200);
    assert.equal(response.body.data.status, 'alive');
    assert.match(response.body.data.at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/);
  });
});
