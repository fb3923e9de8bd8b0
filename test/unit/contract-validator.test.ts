import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { webhookEventExamples } from '../../shared/webhooks/event-schemas.ts';
import { openApiProblems, webhookEventProblems } from '../support/contract.ts';

/**
 * The response validator that `call()` runs on every integration-test response must itself catch
 * wrong shapes: each `wrong` fixture breaks the contract in one way, each `right` one keeps it.
 */
interface Fixture {
  name: string;
  method: string;
  path: string;
  status: number;
  body: unknown;
  problem?: string;
}
const fixtures = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'contract-responses.json'), 'utf8'),
) as { right: Fixture[]; wrong: Fixture[] };

function response(fixture: Fixture, headers: Record<string, string> = {}) {
  const text = JSON.stringify(fixture.body);
  return {
    status: fixture.status,
    headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'req-1', ...headers }),
    body: fixture.body,
    text,
  };
}

describe('response validator (test/support/contract.ts)', () => {
  for (const fixture of fixtures.right) {
    it(`accepts ${fixture.name}`, () => {
      assert.deepEqual(openApiProblems(fixture.method, fixture.path, response(fixture)), []);
    });
  }

  for (const fixture of fixtures.wrong) {
    it(`catches ${fixture.name}`, () => {
      const problems = openApiProblems(fixture.method, fixture.path, response(fixture));
      assert.notDeepEqual(problems, [], 'the wrong shape passed');
      assert.ok(
        problems.some((problem) => problem.includes(fixture.problem ?? '')),
        `expected a problem mentioning ${fixture.problem}: ${problems.join(' | ')}`,
      );
    });
  }

  it('catches a missing x-request-id and a body that is not JSON', () => {
    const [right] = fixtures.right;
    assert.ok(right);
    const noId = { ...response(right), headers: new Headers({ 'content-type': 'application/json' }) };
    assert.match(openApiProblems(right.method, right.path, noId).join(), /x-request-id/);
    const html = {
      ...response(right, { 'content-type': 'text/html' }),
      body: '<p>ok</p>',
      text: '<p>ok</p>',
    };
    assert.match(openApiProblems(right.method, right.path, html).join(), /not JSON/);
  });

  it('ignores the query string of the path', () => {
    const [right] = fixtures.right;
    assert.ok(right);
    assert.deepEqual(openApiProblems(right.method, `${right.path}?dry_run=true`, response(right)), []);
  });
});

describe('webhook event validator (test/support/contract.ts, WebhookEvent)', () => {
  const delivered = webhookEventExamples.delivered?.value as {
    type: string;
    data: Record<string, unknown>;
  };
  const body = (value: unknown) => JSON.stringify(value);

  it('accepts the documented example of each kind', () => {
    for (const [name, example] of Object.entries(webhookEventExamples))
      assert.deepEqual(webhookEventProblems(body(example.value)), [], name);
  });

  it('catches a missing, an extra and a mistyped field, naming it and the member of the union', () => {
    const { metadata: _metadata, ...withoutMetadata } = delivered.data;
    assert.match(
      webhookEventProblems(body({ ...delivered, data: withoutMetadata })).join(' | '),
      /message\.delivered \(MessageEvent\): \/data must have required property .*metadata/,
    );
    assert.match(
      webhookEventProblems(body({ ...delivered, data: { ...delivered.data, opened: true } })).join(' | '),
      /\/data must NOT have additional properties .*opened/,
    );
    assert.match(
      webhookEventProblems(
        body({ ...delivered, data: { ...delivered.data, tags: { category: 'x' } } }),
      ).join(),
      /\/data\/tags must be array/,
    );
    assert.match(
      webhookEventProblems(body({ ...delivered, data: { ...delivered.data, metadata: { n: 7 } } })).join(),
      /\/data\/metadata\/n must be string/,
    );
  });

  it('catches a recipient on a cancel, none on a delivery, a date without offset and an unknown type', () => {
    const cancelled = webhookEventExamples.cancelled?.value as { data: Record<string, unknown> };
    const recipient = { email: 'a@example.org', status: 'delivered', detail: null };
    assert.notDeepEqual(
      webhookEventProblems(body({ ...cancelled, data: { ...cancelled.data, recipient } })),
      [],
    );
    assert.notDeepEqual(
      webhookEventProblems(body({ ...delivered, data: { ...delivered.data, recipient: null } })),
      [],
    );
    assert.match(
      webhookEventProblems(body({ ...delivered, timestamp: '2026-11-23T10:58:40Z' })).join(),
      /\/timestamp must match pattern/,
    );
    assert.match(
      webhookEventProblems(body({ ...delivered, type: 'message.read' })).join(),
      /"message\.read" is none of the documented event types/,
    );
    assert.match(webhookEventProblems('{"type":').join(), /not JSON/);
  });
});
