import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { buildOpenApi, documentPath } from '../../infra/openapi/build.ts';
import { routes } from '../../shared/routes.ts';
import { openApiProblems } from '../support/contract.ts';
import { call } from '../support/host.ts';

const committed = JSON.parse(readFileSync(documentPath, 'utf8')) as any;

describe('OpenAPI document', () => {
  it('is up to date with the route table and schemas (else run `npm run openapi`)', () => {
    assert.deepEqual(
      committed,
      JSON.parse(JSON.stringify(buildOpenApi())),
      'docs/openapi.json is stale: run `npm run openapi`',
    );
  });

  it('documents every route with its scopes and dry-run parameter', () => {
    assert.equal(committed.openapi, '3.0.3');
    for (const route of routes) {
      const operation = committed.paths[route.path]?.[route.method.toLowerCase()];
      assert.ok(operation, `${route.method} ${route.path}`);
      assert.deepEqual(operation.security, route.public ? [] : [{ bearer: [] }], route.id);
      if (!route.public) assert.deepEqual(operation['x-scopes'], route.scopes, route.id);
      const dryRun = (operation.parameters ?? []).some(
        (parameter: { name: string }) => parameter.name === 'dry_run',
      );
      assert.equal(dryRun, route.dryRun, `${route.id} dry_run parameter`);
      if (!route.public) assert.match(operation.responses['401'].description, /104: .*105: .*110: /);
    }
    assert.equal(committed.components.securitySchemes.bearer.scheme, 'bearer');
    assert.ok(committed.components.schemas.Error.properties.error.properties.code.enum.includes(10000001));
  });

  it('is served at GET /openapi.json, public and cacheable, exactly as committed', async () => {
    const response = await call('GET', '/openapi.json');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(response.headers.get('cache-control') ?? '', /public, max-age=\d+/);
    assert.deepEqual(response.body, committed);

    const etag = response.headers.get('etag') ?? '';
    assert.ok(etag);
    const again = await call('GET', '/openapi.json', { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
  });

  it('matches the responses of the service endpoints, successes and errors', async () => {
    for (const path of ['/health', '/keepalive-1.0']) {
      const response = await call('GET', path);
      assert.deepEqual(openApiProblems('GET', path, response), [], path);
    }
    const dryRun = await call('GET', '/health', { query: { dry_run: 'true' } });
    assert.equal(dryRun.status, 406);
    assert.deepEqual(openApiProblems('GET', '/health', dryRun), []);

    const forged = { ...(await call('GET', '/health')), body: { data: { status: 'ok' } } };
    assert.notDeepEqual(openApiProblems('GET', '/health', forged), [], 'a body missing caller_ip is caught');
  });
});
