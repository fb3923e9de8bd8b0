import assert from 'node:assert/strict';
import { afterAll, afterEach, beforeEach, describe, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { handler as health } from '../../functions/health/handler.ts';
import { handler as keepaliveRun } from '../../functions/keepalive-run/handler.ts';
import { avatarGetRequest, keepaliveRunRequest } from '../../shared/avatars/schemas.ts';
import { dkimSetAlgorithmRequest } from '../../shared/domains/dkim/schemas.ts';
import { Code } from '../../shared/platform/errors/catalogue.ts';
import { ServiceError } from '../../shared/platform/errors/service-error.ts';
import { dataResponse } from '../../shared/platform/http/envelope.ts';
import { onLogLine } from '../../shared/platform/observability/log.ts';
import { bearer, protectedChain } from '../support/chain.ts';
import { hasNoInternals, internalsIn } from '../support/host.ts';
import { type HandlerAnswer, invoke } from '../support/lambda-event.ts';

/*
 * The Middy chain (shared/platform/http/chain.ts) and its middlewares, called with an API Gateway
 * event and a Lambda context: no gateway, no emulator, no token server. The settings are read when
 * the modules load, so they are set before anything is imported (vi.hoisted) and restored after:
 * two blocked networks, 3 requests per bucket that never refill, two CORS origins. Every request
 * comes from an address of its own (test/support/lambda-event.ts) unless a test names one.
 *
 * Token verification needs the JWKS over HTTP (shared/platform/auth/token-verifier.ts) and the
 * account record in DynamoDB, so the cases with a verified token stay in test/integration
 * (auth.test.ts, chain.test.ts, faults.test.ts). Here the real handlers answer what comes before
 * verification (103, 104, 110, 114, 115), and the checks after it run behind a stand-in for
 * `bearerAuth` that names the caller, in protectedHandler's order.
 */
const saved = vi.hoisted(() => {
  const settings: Record<string, string> = {
    BLOCKED_CIDRS: '198.51.100.0/24,2001:db8:bad::/48',
    RATE_LIMIT_RPS: '0',
    RATE_LIMIT_BURST: '3',
    CORS_ORIGINS: 'https://app.example,https://admin.example',
    LOG_FILE: '/dev/null',
  };
  const previous = Object.fromEntries(Object.keys(settings).map((name) => [name, process.env[name]]));
  Object.assign(process.env, settings);
  return previous;
});

afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** The service's log lines of the current test, parsed. */
let lines: Record<string, any>[] = [];
let stopListening: () => void = () => undefined;
beforeEach(() => {
  lines = [];
  stopListening = onLogLine((line) => {
    lines.push(JSON.parse(line) as Record<string, any>);
  });
});
afterEach(() => stopListening());

function expectError(answer: HandlerAnswer, status: number, code: number): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.body.error.code, code, answer.text);
  assert.ok(answer.headers.get('x-request-id'), 'every answer has a request id');
  assert.ok(hasNoInternals(answer.text), internalsIn(answer.text));
}

const fields = (answer: HandlerAnswer): string[] =>
  answer.body.error.details.map((detail: { field: string }) => detail.field);

const notChecked = 'the action of a unit chain answers a placeholder, not the route’s documented data';

describe('a public handler called with an event (functions/health)', () => {
  it('answers with the gateway’s source address, the request id, nosniff and RateLimit-*, and may be cached', async () => {
    const answer = await invoke(health, 'health', {
      sourceIp: '203.0.113.7',
      requestId: 'gateway-request-1',
      headers: { 'X-Forwarded-For': '192.0.2.99' },
    });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body, { data: { status: 'ok', caller_ip: '203.0.113.7' } });
    assert.equal(answer.headers.get('x-request-id'), 'gateway-request-1');
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(answer.headers.get('ratelimit-limit'), '3');
    assert.equal(answer.headers.get('ratelimit-remaining'), '2');
    assert.equal(answer.headers.get('cache-control'), null, 'a public answer may be cached');
    const logged = lines.find((line) => line.message === 'request');
    assert.deepEqual(
      { requestId: logged?.requestId, route: logged?.route, status: logged?.status },
      { requestId: 'gateway-request-1', route: 'GET /health', status: 200 },
    );
  });

  it('makes up a request id when the gateway gave none', async () => {
    const answer = await invoke(health, 'health', { requestId: '' });
    assert.match(answer.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  it('sets CORS headers for a configured origin only, and always exposes the headers a client reads', async () => {
    const allowed = await invoke(health, 'health', { headers: { Origin: 'https://admin.example' } });
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://admin.example');
    assert.equal(allowed.headers.get('vary'), 'Origin');
    assert.match(allowed.headers.get('access-control-expose-headers') ?? '', /x-request-id, retry-after/);

    for (const headers of [{ Origin: 'https://evil.example' }, {}] as Record<string, string>[]) {
      const other = await invoke(health, 'health', { headers });
      assert.equal(other.status, 200);
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      assert.equal(other.headers.get('vary'), null);
    }
  });

  it('answers 103 inside BLOCKED_CIDRS (IPv4 and IPv6) before the rate limit and the dry-run check', async () => {
    for (const sourceIp of ['198.51.100.7', '2001:db8:bad::1']) {
      for (let i = 0; i < 5; i += 1) {
        const blocked = await invoke(health, 'health', { sourceIp, query: { dry_run: 'true' } });
        expectError(blocked, 401, 103);
        assert.equal(blocked.headers.get('ratelimit-limit'), null, 'the network rule runs first');
      }
    }
    const neighbour = await invoke(health, 'health', { sourceIp: '198.51.101.7' });
    assert.equal(neighbour.status, 200, neighbour.text);
  });

  it('answers 114 to ?dry_run=true where the route has no dry run; false and 0 are no dry run', async () => {
    expectError(await invoke(health, 'health', { query: { dry_run: 'true' } }), 406, 114);
    expectError(await invoke(health, 'health', { query: { dry_run: '1' } }), 406, 114);
    for (const value of ['false', '0']) {
      const answer = await invoke(health, 'health', { query: { dry_run: value } });
      assert.equal(answer.status, 200, `${value}: ${answer.text}`);
    }
  });

  it('refuses a ?dry_run= value other than true, false, 1 or 0 with 107 naming the values', async () => {
    for (const value of ['no', 'yes', 'FALSE', '', 'truee']) {
      const answer = await invoke(health, 'health', { query: { dry_run: value } });
      expectError(answer, 406, 107);
      const details = (
        JSON.parse(answer.text) as { error: { details: { field: string; message: string }[] } }
      ).error.details;
      assert.equal(details[0]?.field, '?dry_run');
      assert.match(details[0]?.message ?? '', /true, false, 1, 0/);
    }
  });

  it('answers 115 with Retry-After and RateLimit-* once an address has used its burst; others go on', async () => {
    const sourceIp = '203.0.113.20';
    for (const remaining of ['2', '1', '0']) {
      const answer = await invoke(health, 'health', { sourceIp });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers.get('ratelimit-remaining'), remaining);
    }
    const limited = await invoke(health, 'health', { sourceIp });
    expectError(limited, 429, 115);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
    assert.equal(limited.headers.get('ratelimit-limit'), '3');
    assert.equal(limited.headers.get('ratelimit-remaining'), '0');
    assert.ok(Number(limited.headers.get('ratelimit-reset')) >= 1);
    assert.equal((await invoke(health, 'health', { sourceIp: '203.0.113.21' })).status, 200);
  });
});

describe('a protected handler called with an event, before any token is verified (functions/keepalive-run)', () => {
  it('answers 104 without an Authorization header or with a blank one, before anything else is read', async () => {
    for (const headers of [{}, { Authorization: '   ' }] as Record<string, string>[]) {
      const answer = await invoke(keepaliveRun, 'keepalive-run', {
        headers: { ...headers, 'content-type': 'application/json' },
        rawBody: '{',
        query: { dry_run: 'true' },
      });
      expectError(answer, 401, 104);
      assert.equal(answer.headers.get('cache-control'), 'no-store', 'an authenticated route is never cached');
    }
    const logged = lines.filter((line) => line.message === 'request');
    assert.deepEqual(
      logged.map((line) => [line.route, line.status, line.code]),
      [
        ['POST /keepalive-1.0', 401, 104],
        ['POST /keepalive-1.0', 401, 104],
      ],
    );
  });

  it('answers 110 to an Authorization header that is not a Bearer token', async () => {
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b']) {
      expectError(await invoke(keepaliveRun, 'keepalive-run', { headers: { authorization } }), 401, 110);
    }
  });

  it('answers 104 to a scheduled-looking body sent through API Gateway: that door needs a token', async () => {
    const answer = await invoke(keepaliveRun, 'keepalive-run', {
      body: { source: 'aws.events', 'detail-type': 'Scheduled Event' },
    });
    expectError(answer, 401, 104);
  });

  it('charges failed authentications to the address: 115 instead of 104 once its bucket is empty', async () => {
    const sourceIp = '203.0.113.30';
    for (let i = 0; i < 3; i += 1)
      expectError(await invoke(keepaliveRun, 'keepalive-run', { sourceIp }), 401, 104);
    const limited = await invoke(keepaliveRun, 'keepalive-run', { sourceIp });
    expectError(limited, 429, 115);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    // The same address bucket as its requests to public routes.
    expectError(await invoke(health, 'health', { sourceIp }), 429, 115);
    expectError(await invoke(keepaliveRun, 'keepalive-run', { sourceIp: '203.0.113.31' }), 401, 104);
  });
});

describe('the checks after authentication, in protectedHandler’s order', () => {
  it('answers 113 when the caller lacks the route’s scope, before the dry-run, JSON and schema checks', async () => {
    const chain = protectedChain(
      'dkim-set-algorithm',
      { scopes: ['domains:read'] },
      {
        schema: dkimSetAlgorithmRequest,
        from: 'body',
      },
    );
    const answer = await invoke(chain, 'dkim-set-algorithm', {
      headers: { ...bearer, 'content-type': 'application/json' },
      rawBody: '{',
      query: { dry_run: 'true' },
    });
    expectError(answer, 403, 113);
    assert.match(answer.body.error.message, /domains:write/);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
  });

  it('answers 114 to a dry run where the route has none, after the scope check and before the body', async () => {
    const chain = protectedChain(
      'keepalive-run',
      { scopes: ['keepalive:run'] },
      {
        schema: keepaliveRunRequest,
        from: 'body',
      },
    );
    const answer = await invoke(chain, 'keepalive-run', {
      headers: { ...bearer, 'content-type': 'application/json' },
      rawBody: '{',
      query: { dry_run: 'true' },
    });
    expectError(answer, 406, 114);
    const noDryRun = await invoke(chain, 'keepalive-run', {
      headers: bearer,
      query: { dry_run: 'false' },
      skipContract: notChecked,
    });
    assert.equal(noDryRun.status, 200, noDryRun.text);
  });

  it('tells the action about a dry run where the route has one', async () => {
    const seen: boolean[] = [];
    const chain = protectedChain<unknown>(
      'dkim-set-algorithm',
      { scopes: ['domains:write'] },
      { schema: dkimSetAlgorithmRequest, from: 'body' },
      async ({ dryRun }) => {
        seen.push(dryRun);
        return dataResponse({});
      },
    );
    const body = { domain: 'example.test', algorithm: 'rsa-sha256' };
    for (const dry_run of ['true', '1', 'false']) {
      const answer = await invoke(chain, 'dkim-set-algorithm', {
        headers: bearer,
        body,
        query: { dry_run },
        skipContract: notChecked,
      });
      assert.equal(answer.status, 200, answer.text);
    }
    assert.deepEqual(seen, [true, true, false]);
  });

  it('answers 106 to a body that is not JSON or is not sent as JSON', async () => {
    const chain = protectedChain(
      'dkim-set-algorithm',
      { scopes: ['domains:write'] },
      {
        schema: dkimSetAlgorithmRequest,
        from: 'body',
      },
    );
    const cases: Array<[string, string]> = [
      ['{"domain": "example.test", ', 'application/json'],
      ['domain=example.test', 'application/x-www-form-urlencoded'],
      ['{"domain": "example.test", "algorithm": "rsa-sha256"}', 'text/plain'],
    ];
    for (const [rawBody, contentType] of cases) {
      const answer = await invoke(chain, 'dkim-set-algorithm', {
        headers: { ...bearer, 'content-type': contentType },
        rawBody,
      });
      expectError(answer, 400, 106);
    }
  });

  it('reads a base64-encoded body and a +json media type, and drops __proto__ keys', async () => {
    const inputs: unknown[] = [];
    const chain = protectedChain<unknown>(
      'dkim-set-algorithm',
      { scopes: ['domains:write'] },
      { schema: dkimSetAlgorithmRequest, from: 'body' },
      async ({ input }) => {
        inputs.push(input);
        return dataResponse({});
      },
    );
    const text = '{"domain": " example.test ", "algorithm": "ed25519-sha256", "__proto__": {"admin": true}}';
    const answer = await invoke(chain, 'dkim-set-algorithm', {
      headers: { ...bearer, 'content-type': 'application/vnd.api+json; charset=utf-8' },
      rawBody: Buffer.from(text).toString('base64'),
      isBase64Encoded: true,
      skipContract: notChecked,
    });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(inputs, [{ domain: 'example.test', algorithm: 'ed25519-sha256' }]);
    assert.equal(({} as { admin?: boolean }).admin, undefined);
  });

  it('answers 107 with a detail for every field: missing, wrong or unknown; an empty body is checked, not refused', async () => {
    const chain = protectedChain(
      'dkim-set-algorithm',
      { scopes: ['domains:write'] },
      {
        schema: dkimSetAlgorithmRequest,
        from: 'body',
      },
    );
    const call = (options: Parameters<typeof invoke>[2]) =>
      invoke(chain, 'dkim-set-algorithm', { ...options, headers: { ...bearer, ...options?.headers } });

    const empty = await call({});
    expectError(empty, 406, 107);
    assert.deepEqual(empty.body.error.details, [
      { field: 'domain', message: 'domain is required' },
      { field: 'algorithm', message: 'algorithm is required' },
    ]);

    const wrong = await call({ body: { domain: 'not a domain', algorithm: 'md5', colour: 'red' } });
    expectError(wrong, 406, 107);
    assert.deepEqual(fields(wrong).sort(), ['algorithm', 'colour', 'domain']);

    // A body route reads nothing from the query string but dry_run (and the ignored tenant_id).
    const query = await call({
      body: { domain: 'example.test', algorithm: 'rsa-sha256' },
      query: { domain: 'example.test', tenant_id: 't' },
    });
    expectError(query, 406, 107);
    assert.deepEqual(fields(query), ['?domain']);
  });

  it('accepts and ignores tenant_id, in a body and in a query string', async () => {
    const inputs: unknown[] = [];
    const record = async ({ input }: { input: unknown }) => {
      inputs.push(input);
      return dataResponse({});
    };
    const body = protectedChain(
      'dkim-set-algorithm',
      { scopes: ['domains:write'] },
      {
        schema: dkimSetAlgorithmRequest,
        from: 'body',
      },
      record,
    );
    const query = protectedChain(
      'avatar-get',
      { scopes: ['avatars:read'] },
      {
        schema: avatarGetRequest,
        from: 'query',
      },
      record,
    );
    const first = await invoke(body, 'dkim-set-algorithm', {
      headers: bearer,
      body: { domain: 'example.test', algorithm: 'rsa-sha256', tenant_id: 'other.test' },
      skipContract: notChecked,
    });
    const second = await invoke(query, 'avatar-get', {
      headers: bearer,
      query: { email: 'Ada@Example.test', tenant_id: 'other.test' },
      skipContract: notChecked,
    });
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.deepEqual(inputs, [
      { domain: 'example.test', algorithm: 'rsa-sha256' },
      { email: 'ada@example.test', size: 80 },
    ]);
  });

  it('answers a query route: 107 for a missing field, 10000001 for an address, 10010001 for a size', async () => {
    const chain = protectedChain(
      'avatar-get',
      { scopes: ['avatars:read'] },
      {
        schema: avatarGetRequest,
        from: 'query',
      },
    );
    const missing = await invoke(chain, 'avatar-get', { headers: bearer, query: { size: '64' } });
    expectError(missing, 406, 107);
    assert.deepEqual(fields(missing), ['email']);

    const address = await invoke(chain, 'avatar-get', { headers: bearer, query: { email: 'a@@b.test' } });
    expectError(address, 406, 10000001);
    assert.deepEqual(fields(address), ['email']);

    const size = await invoke(chain, 'avatar-get', {
      headers: bearer,
      query: { email: 'ada@example.test', size: '4096' },
    });
    expectError(size, 406, 10010001);
    assert.deepEqual(fields(size), ['size']);

    const unknown = await invoke(chain, 'avatar-get', {
      headers: bearer,
      query: { email: 'ada@example.test', colour: 'red' },
    });
    expectError(unknown, 406, 107);
    assert.deepEqual(fields(unknown), ['colour']);
  });

  it('answers 115 once the caller’s account has used its burst, whatever its address; other accounts go on', async () => {
    const chain = protectedChain('keepalive-run', { scopes: ['keepalive:run'], account: 'busy' }, undefined);
    const other = protectedChain('keepalive-run', { scopes: ['keepalive:run'], account: 'quiet' }, undefined);
    for (const remaining of ['2', '1', '0']) {
      const answer = await invoke(chain, 'keepalive-run', { headers: bearer, skipContract: notChecked });
      assert.equal(answer.headers.get('ratelimit-remaining'), remaining, answer.text);
    }
    const limited = await invoke(chain, 'keepalive-run', { headers: bearer });
    expectError(limited, 429, 115);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal(
      (await invoke(other, 'keepalive-run', { headers: bearer, skipContract: notChecked })).status,
      200,
    );
  });
});

describe('errors as the envelope answers them', () => {
  it('answers an unexpected error with code 2 and the request id only; the log has the rest', async () => {
    const chain = protectedChain('keepalive-run', { scopes: ['keepalive:run'] }, undefined, async () => {
      const error = new Error('connect ECONNREFUSED 10.0.0.5:8000 (DynamoDBServiceException)');
      error.stack = `${error.message}\n    at send (/var/task/node_modules/@aws-sdk/client.ts:12:3)`;
      throw error;
    });
    const answer = await invoke(chain, 'keepalive-run', { headers: bearer, requestId: 'req-boom' });
    expectError(answer, 500, 2);
    assert.deepEqual(Object.keys(answer.body.error).sort(), ['code', 'message']);
    assert.match(answer.body.error.message, /req-boom/);
    assert.ok(!answer.text.includes('ECONNREFUSED') && !answer.text.includes('10.0.0.5'), answer.text);

    const logged = lines.filter((line) => line.requestId === 'req-boom');
    const error = logged.find((line) => line.level === 'ERROR');
    assert.equal(error?.message, 'unexpected error');
    assert.match(JSON.stringify(error), /ECONNREFUSED/, 'the cause is logged, not answered');
    assert.ok(logged.some((line) => line.message === 'request' && line.code === 2 && line.status === 500));
  });

  it('answers a ServiceError of the action with its code, message, details and headers', async () => {
    const chain = protectedChain('dkim-set-algorithm', { scopes: ['domains:write'] }, undefined, async () => {
      throw new ServiceError(Code.NotFound, 'Domain not found', {
        details: [{ field: 'domain', message: 'not yours' }],
        headers: { 'retry-after': '7' },
      });
    });
    const answer = await invoke(chain, 'dkim-set-algorithm', { headers: bearer });
    expectError(answer, 404, 112);
    assert.deepEqual(answer.body.error, {
      code: 112,
      message: 'Domain not found',
      details: [{ field: 'domain', message: 'not yours' }],
    });
    assert.equal(answer.headers.get('retry-after'), '7');
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    assert.equal(answer.headers.get('ratelimit-limit'), '3', 'the rate-limit headers are on errors too');
  });

  it.each([
    ['a check that fails', new TypeError('a bug in a refinement'), 501, 9],
    ['input that exhausts the stack', new RangeError('Maximum call stack size exceeded'), 406, 107],
  ] as const)(
    'answers %s with a catalogue error, never an unhandled rejection',
    async (_case, thrown, status, code) => {
      const throwing = z.object({}).check(
        z.refine(() => {
          throw thrown;
        }),
      );
      const chain = protectedChain(
        'dkim-set-algorithm',
        { scopes: ['domains:write'] },
        {
          schema: throwing,
          from: 'body',
        },
      );
      const answer = await invoke(chain, 'dkim-set-algorithm', {
        headers: bearer,
        body: {},
      });
      expectError(answer, status, code);
    },
  );
});
