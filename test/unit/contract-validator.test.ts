import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { openApiProblems } from '../support/contract.ts';

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
