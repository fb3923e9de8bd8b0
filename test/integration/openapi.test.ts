import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'vitest';
import { buildOpenApi, clientTypesPath, documentPath, renderClientTypes } from '../../infra/openapi/build.ts';
import { type RouteId, routeDetails, routes } from '../../shared/routes.ts';
import { webhookEventTypes } from '../../shared/webhooks/model/events.ts';
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
  });

  it('lists the codes each endpoint can answer, narrowed per HTTP status', () => {
    const codes = (path: string, method: string, status: string): number[] => {
      const reference: string | undefined =
        committed.paths[path][method].responses[status]?.content['application/json'].schema.$ref;
      if (reference === undefined) return [];
      const schema = committed.components.schemas[reference.replace('#/components/schemas/', '')];
      return schema.properties.error.properties.code.enum;
    };
    assert.deepEqual(codes('/message/add-1.0', 'post', '406'), [107, 111, 10000001]);
    assert.deepEqual(codes('/message/add-1.0', 'post', '401'), [103, 104, 105, 110]);
    assert.deepEqual(codes('/message/add-1.0', 'post', '503'), [3, 4, 5, 7]);
    // 10000001: an invalid `recipient` filter.
    assert.deepEqual(codes('/message/query-1.0', 'post', '406'), [107, 114, 10000001]);
    assert.deepEqual(codes('/message/batch-1.0', 'post', '406'), [107, 111, 10000001]);
    assert.deepEqual(codes('/domain/dkim/status-1.0', 'get', '404'), [112]);
    assert.deepEqual(codes('/domain/dkim/set-algorithm-1.0', 'post', '404'), [112]);
    assert.deepEqual(codes('/avatar/get-1.0', 'get', '406'), [107, 114, 10000001, 10010001]);
    assert.deepEqual(codes('/keepalive-1.0', 'post', '500'), [2, 10020001]);
    assert.deepEqual(codes('/health', 'get', '401'), [103]);
    assert.equal(committed.paths['/health'].get.responses['404'], undefined, 'health answers no 404');
    const idempotency = committed.paths['/message/add-1.0'].post.parameters.find(
      (parameter: { name: string }) => parameter.name === 'Idempotency-Key',
    );
    assert.equal(idempotency?.in, 'header');
  });

  it('describes the body of every webhook event type: WebhookEvent, and the delivery in x-webhooks', () => {
    const union = committed.components.schemas.WebhookEvent;
    assert.equal(union.discriminator.propertyName, 'type');
    assert.deepEqual(Object.keys(union.discriminator.mapping).sort(), [...webhookEventTypes].sort());
    for (const reference of Object.values(union.discriminator.mapping) as string[])
      assert.ok(
        union.oneOf.some((member: { $ref: string }) => member.$ref === reference),
        `${reference} is a member of the union`,
      );
    const delivery = committed['x-webhooks'].WebhookEvent.post;
    assert.equal(
      delivery.requestBody.content['application/json'].schema.$ref,
      '#/components/schemas/WebhookEvent',
    );
    assert.deepEqual(
      delivery.parameters.map((parameter: { name: string }) => parameter.name),
      ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    );
  });

  it('has a request and a success example for every operation, each valid against its schema', () => {
    for (const route of routes) {
      const entry = routeDetails[route.id as RouteId];
      const responseExamples = Object.values(entry.examples?.response ?? {});
      // A page or an empty answer (the unsubscribe routes) has no JSON to show.
      if (entry.raw === undefined && entry.page === undefined)
        assert.ok(responseExamples.length > 0, `${route.id}: a success example`);
      for (const example of responseExamples) {
        const forged = {
          status: 200,
          headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'example' }),
          body: { data: example.value },
          text: JSON.stringify({ data: example.value }),
        };
        assert.deepEqual(
          openApiProblems(route.method, route.path, forged),
          [],
          `${route.id}: ${example.summary}`,
        );
      }
      if (entry.request === undefined) continue;
      const requestExamples = Object.values(entry.examples?.request ?? {});
      assert.ok(requestExamples.length > 0, `${route.id}: a request example`);
      for (const example of requestExamples) {
        const parsed = entry.request['~standard'].validate(example.value);
        assert.ok(
          !(parsed instanceof Promise) && parsed.issues === undefined,
          `${route.id}: ${example.summary}`,
        );
      }
    }
  });

  it('the typed client types are up to date (else run `npm run openapi`)', async () => {
    assert.equal(
      readFileSync(clientTypesPath, 'utf8'),
      await renderClientTypes(committed),
      'clients/openapi.ts is stale: run `npm run openapi`',
    );
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
    // (call() itself already failed the test if a real response did not match.)
    assert.notDeepEqual(openApiProblems('GET', '/health', forged), [], 'a body missing caller_ip is caught');
  });
});
