import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { beforeAll, describe, it } from 'vitest';
import { registerDomain } from '../../shared/domains/registry.ts';
import { catalogue } from '../../shared/platform/errors/catalogue.ts';
import type { Route } from '../../shared/platform/http/route.ts';
import { routes } from '../../shared/routes.ts';
import { recordFigures } from '../support/figures.ts';
import {
  hasNoInternals,
  hostInfo,
  internalsIn,
  mintToken,
  uniqueAccount,
  uniqueDomain,
  useHostEnvironment,
} from '../support/host.ts';

/**
 * Hostile input for every route of the route table: generated bodies, query strings and headers
 * (wrong types, huge strings, deep nesting, unicode, CR/LF, prototype-pollution keys, invalid
 * base64, EML with smuggled headers, attachment names with paths). Whatever arrives, the answer
 * is never a 5xx, never a stack trace, and always the envelope with a catalogue code. The write
 * paths (add, delete, set-algorithm) run for real, not as dry runs: accepted requests store, queue,
 * delete and rotate keys, and still nothing answers 5xx.
 * HOSTILE_RUNS sets the number of requests per route (300 in `npm test`, 2,000 in
 * `npm run test:reliability`).
 */
const runsPerRoute = Number(process.env.HOSTILE_RUNS ?? 300);
const concurrency = 8;

const account = uniqueAccount('hostile');
const domain = uniqueDomain('hostile');
const sender = `app@${domain}`;

const base64 = (text: string) => Buffer.from(text).toString('base64');

/** A valid request per route, which the generators then break one piece at a time. */
function template(route: Route): { body?: Record<string, unknown>; query?: Record<string, string> } {
  switch (route.id) {
    case 'message-add':
      return {
        body: {
          message_sender: sender,
          from: [`App <${sender}>`],
          to: ['someone@example.net'],
          cc: [{ email: 'cc@example.net', name: 'Cc' }],
          subject: 'Hello',
          content: { kind: 'text_only', text: 'Hi' },
          attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: base64('hello') }],
          headers: { 'X-Campaign': 'welcome' },
          scheduling: { mode: 'manual-wait' },
        },
      };
    case 'message-batch':
      return {
        body: {
          validation: 'permissive',
          messages: [
            {
              message_sender: sender,
              to: ['someone@example.net'],
              subject: 'Hello',
              content: { kind: 'text_only', text: 'Hi' },
              attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: base64('hello') }],
              tags: [{ name: 'category', value: 'welcome' }],
              metadata: { user_id: 'u-1' },
              scheduling: { mode: 'manual-wait' },
            },
          ],
        },
      };
    case 'message-query':
      return { body: { filters: { status: 'queued', limit: 10 } } };
    case 'message-delete':
      return { body: { message_uuids: [randomUUID()] } };
    case 'message-content':
      return { body: { message_uuid: randomUUID() } };
    case 'stats-query':
      return {
        body: {
          date_from: '2026-11-01T00:00:00+01:00',
          date_to: '2026-11-30T23:59:59+01:00',
          granularity: 'day',
          group_by: 'domain',
        },
      };
    case 'dkim-set-algorithm':
      return { body: { domain, algorithm: 'ed25519-sha256' } };
    case 'dkim-status':
      return { query: { domain } };
    case 'avatar-get':
      return { query: { email: 'someone@example.net', size: '80' } };
    case 'suppression-query':
      return { body: { filters: { reason: 'manual', limit: 10 } } };
    case 'suppression-add':
    case 'suppression-delete':
      return { body: { emails: ['someone@example.net', 'Other <other@example.net>'] } };
    case 'template-add':
      return {
        body: {
          alias: 'hostile',
          name: 'Hostile',
          subject: 'Hi {{name}}',
          html: '<p>{{name}}</p>{{#each items}}{{title}}{{/each}}',
          text: 'Hi {{name}}',
        },
      };
    case 'template-update':
      return {
        body: { alias: 'hostile', subject: 'Hi {{name}}!', html: '<p>{{{name}}}</p>', layout_alias: null },
      };
    case 'template-publish':
      return { body: { alias: 'hostile', version: 1 } };
    case 'template-query':
      return { body: { alias: 'hostile', version: 1 } };
    case 'template-delete':
      return { body: { alias: 'hostile' } };
    case 'template-render':
      return {
        body: {
          subject: 'Hi {{name}}',
          html: '<p>{{constructor.constructor}}{{__proto__}}</p>',
          model: { name: 'x' },
        },
      };
    case 'inbound-query':
      return {
        body: {
          filters: { recipient: `support@${domain}`, date_from: '2026-11-01T00:00:00+01:00', limit: 10 },
        },
      };
    case 'inbound-delete':
      return { body: { inbound_uuid: randomUUID() } };
    default:
      return route.method === 'POST' ? { body: {} } : { query: {} };
  }
}

const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom(
    'x'.repeat(200_000),
    'a\r\nBcc: victim@example.net',
    'Name\n <x@example.net>',
    '../../etc/passwd',
    '..\\..\\windows\\system32',
    'not base64 !!!',
    '=?utf-8?b?invalid?=',
    '',
    ' ',
    '\u0000',
    '😀'.repeat(1000),
    'a@b',
    'a@@b.example',
    '<script>alert(1)</script>',
    '2026-13-45T99:99:99+25:00',
    -1,
    0,
    1e308,
    Number.MAX_SAFE_INTEGER,
    true,
    null,
    [],
    {},
    { __proto__: { polluted: true } },
    { constructor: { prototype: { polluted: true } } },
    base64('From: a@example.net\r\nBcc: smuggled@example.net\r\nSubject: x\r\n\r\nbody'),
    base64('no headers at all'),
  ),
);

/** Raw body texts that are not (or barely) JSON. */
const rawBody: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.constantFrom(
    '',
    'null',
    '[]',
    '"string"',
    '123',
    '{',
    '{"a":',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"a":1e999999}',
    deepArray(20_000),
    deepObject(20_000),
    `{"x":"${'y'.repeat(1_000_000)}"}`,
  ),
);

/** EML messages that try to smuggle headers or break the parser. */
const hostileEml: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'From: a@example.net\r\nTo: b@example.net\r\nBcc: smuggled@example.net\r\nSubject: x\r\n\r\nbody',
    'From: a@example.net\r\nTo: b@example.net\r\nSubject: x\r\n injected: yes\r\n\r\nbody',
    'From: a@example.net\nTo: b@example.net\nSubject: =?utf-8?q?a=0D=0ABcc:_x@example.net?=\n\nbody',
    `From: a@example.net\r\nTo: b@example.net\r\nSubject: ${'x'.repeat(100_000)}\r\n\r\nbody`,
    'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b--',
    'From: a@example.net\r\nTo: "\u0000" <\u0000@example.net>\r\n\r\n',
    'To: ../../etc/passwd\r\n\r\n',
    '',
  ),
  fc.string({ unit: 'binary', maxLength: 400 }),
);

/** Attachment file names that try to escape a directory or break a header. */
const hostileFilename: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    '../../etc/passwd',
    '..\\..\\boot.ini',
    '/etc/shadow',
    'a\r\nContent-Type: text/html',
    'a"; filename="b.exe',
    'x'.repeat(300),
    '',
    '\u0000.txt',
    'CON',
  ),
  fc.string({ unit: 'binary', maxLength: 100 }),
  hostileValue,
);

/** Authorization headers that are not a valid token. */
const hostileAuthorization: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'Bearer',
    'Bearer ',
    'Bearer a.b.c',
    'Basic dXNlcjpwYXNz',
    `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`,
    `Bearer ${'a'.repeat(20_000)}`,
  ),
  fc.string({ maxLength: 300 }).map((text) => `Bearer ${text.replace(/[^\x21-\x7e]/g, '')}`),
);

type Case = { body?: string; query?: Record<string, string>; headers: Record<string, string> };

function caseFor(route: Route): fc.Arbitrary<Case> {
  const { body, query } = template(route);
  const keys = Object.keys(body ?? query ?? {});
  const mutatedBody = fc
    .record({ key: keys.length > 0 ? fc.constantFrom(...keys) : fc.string(), value: hostileValue })
    .map(({ key, value }) => ({ body: JSON.stringify({ ...body, [key]: value }), headers: {} }));
  const nestedBody = fc
    .record({
      key: fc.constantFrom('content', 'scheduling', 'filters', 'attachments', 'to'),
      value: hostileValue,
    })
    .map(({ key, value }) => ({
      body: JSON.stringify({
        ...body,
        [key]: { ...(body?.[key] as object), kind: value, mode: value, status: value, limit: value },
      }),
      headers: {},
    }));
  const mutatedQuery = fc
    .dictionary(
      fc.constantFrom('email', 'size', 'domain', 'dry_run', 'x'),
      fc.string({ unit: 'binary', maxLength: 300 }),
    )
    .map((extra) => ({ query: { ...query, ...extra }, headers: {} }));
  const mutatedHeaders = fc
    .record({
      'content-type': fc.constantFrom(
        'application/json',
        'text/plain',
        'application/xml',
        '',
        'application/json; charset=utf-16',
      ),
      'idempotency-key': fc
        .string({ minLength: 1, maxLength: 300 })
        .filter((value) => /^[\x21-\x7e]+$/.test(value)),
    })
    .map((headers) => ({ body: JSON.stringify(body ?? {}), query, headers }));
  const raw = rawBody.map((text) => ({ body: text, query, headers: {} }));
  const eml = hostileEml.map((text) => ({
    body: JSON.stringify({ ...body, attachments: [], content: { kind: 'eml', eml: base64(text) } }),
    headers: {},
  }));
  const attachment = fc
    .record({ filename: hostileFilename, content_type: hostileValue, content: hostileValue })
    .map((fields) => ({
      body: JSON.stringify({ ...body, attachments: [fields] }),
      headers: {},
    }));
  const authorization = hostileAuthorization.map((value) => ({
    body: JSON.stringify(body ?? {}),
    query,
    headers: { authorization: value },
  }));
  if (route.id === 'message-batch') {
    // A batch's messages are add bodies: break one piece of one message (and of its EML, its
    // attachments, its tags and metadata), next to a valid one.
    const [message = {}] = (body?.messages ?? []) as Array<Record<string, unknown>>;
    const inMessage = (broken: Record<string, unknown>) => ({
      body: JSON.stringify({ ...body, messages: [message, broken] }),
      headers: {},
    });
    const mutatedMessage = fc
      .record({
        key: fc.constantFrom(...Object.keys(message), 'template', 'tenant_id'),
        value: hostileValue,
      })
      .map(({ key, value }) => inMessage({ ...message, [key]: value }));
    const labels = fc
      .record({ name: hostileValue, value: hostileValue, key: fc.string({ maxLength: 60 }) })
      .map(({ name, value, key }) =>
        inMessage({ ...message, tags: [{ name, value }], metadata: { [key]: value } }),
      );
    const messageEml = hostileEml.map((text) =>
      inMessage({ ...message, attachments: [], content: { kind: 'eml', eml: base64(text) } }),
    );
    // A message rendered from a template: a hostile alias, version or model (or an unknown alias).
    const { subject: _subject, content: _content, ...addressed } = message;
    const templated = fc
      .record({
        alias: fc.oneof(hostileValue, fc.constant('no-such-template')),
        version: hostileValue,
        model: hostileValue,
      })
      .map((template) => inMessage({ ...addressed, template }));
    return fc.oneof(
      mutatedBody,
      mutatedHeaders,
      raw,
      authorization,
      mutatedMessage,
      labels,
      messageEml,
      templated,
    );
  }
  return fc.oneof(mutatedBody, nestedBody, mutatedQuery, mutatedHeaders, raw, eml, attachment, authorization);
}

interface Outcome {
  status: number;
  text: string;
}

/**
 * Sends as the given caller, from a rotating loopback address so the per-address rate limit
 * spreads like real traffic. Write paths run for real: no `dry_run` is added (a generated query
 * may still carry one). The template's domain becomes the caller's own.
 */
function send(route: Route, testCase: Case, caller: Caller, index: number): Promise<Outcome> {
  const url = new URL(route.path, hostInfo().url);
  for (const [name, value] of Object.entries(testCase.query ?? {}))
    url.searchParams.set(name, value.replaceAll(domain, caller.domain));
  const body =
    route.method === 'POST' && testCase.body !== undefined
      ? Buffer.from(testCase.body.replaceAll(domain, caller.domain))
      : undefined;
  const token = caller.token;
  const headers: Record<string, string> = { ...testCase.headers };
  if (!route.public && headers.authorization === undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: route.method, headers, localAddress: `127.0.${(index >> 8) & 255}.${index & 255 || 1}` },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

function assertCatalogueAnswer(route: Route, testCase: Case, outcome: Outcome): void {
  const context = `${route.method} ${route.path} with ${JSON.stringify(testCase).slice(0, 300)}`;
  assert.ok(outcome.status < 500, `${context} → ${outcome.status} ${outcome.text.slice(0, 300)}`);
  assert.ok(hasNoInternals(outcome.text), `${context} leaked internals: …${internalsIn(outcome.text)}…`);
  // The click route answers an unknown token with its documented neutral HTML page, not JSON.
  const neutralPage =
    route.public === true && outcome.status === 404 && outcome.text.startsWith('<!DOCTYPE html');
  if (outcome.status >= 400 && !neutralPage) {
    const parsed = JSON.parse(outcome.text) as { error?: { code?: number; message?: string } };
    const code = parsed.error?.code;
    assert.ok(
      code !== undefined && code in catalogue,
      `${context} → no catalogue code: ${outcome.text.slice(0, 300)}`,
    );
    // The gateway's header limit answers 431 with code 107 (its body limit is 406, the catalogue's).
    const gatewayLimit = code === 107 && outcome.status === 431;
    if (!gatewayLimit) {
      assert.equal(
        catalogue[code as keyof typeof catalogue].status,
        outcome.status,
        `${context}: status of code ${code}`,
      );
    }
  }
}

interface Caller {
  token: string;
  domain: string;
}

/** Below RATE_LIMIT_BURST (100): one account's requests on one route never meet its limit. */
const requestsPerAccount = 90;
const callers = new Map<string, Promise<Caller>>();

/** The n-th test account of a route: its own sending domain, registered once, and a token for it. */
function callerFor(route: Route, n: number): Promise<Caller> {
  const key = `${route.id}:${n}`;
  let caller = callers.get(key);
  if (caller === undefined) {
    caller = (async () => {
      const name = `${account}-${route.id}-${n}`;
      const own = uniqueDomain('hostile');
      await registerDomain(own, name);
      return { token: await mintToken({ account: name, claims: { jti: randomUUID() } }), domain: own };
    })();
    callers.set(key, caller);
  }
  return caller;
}

describe('hostile input on every endpoint', () => {
  beforeAll(() => {
    useHostEnvironment();
  });

  for (const route of routes) {
    it(`${route.method} ${route.path}: ${runsPerRoute} hostile requests, never a 5xx or a stack trace`, async () => {
      const cases = fc.sample(caseFor(route), { numRuns: runsPerRoute, seed: 20261122 });
      let next = 0;
      const statuses = new Map<number, number>();
      const worker = async () => {
        while (next < cases.length) {
          const index = next++;
          // The rate limit keys verified callers by account: a new account (with its own sending
          // domain) every 90 requests of a route keeps each within its burst, as many callers would be.
          const caller = await callerFor(route, Math.floor(index / requestsPerAccount));
          const testCase = cases[index] as Case;
          const outcome = await send(route, testCase, caller, index);
          statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
          assertCatalogueAnswer(route, testCase, outcome);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      assert.equal(
        [...statuses.values()].reduce((sum, count) => sum + count, 0),
        runsPerRoute,
      );
      recordFigures(`hostile input: ${route.method} ${route.path}`, {
        requests: runsPerRoute,
        failures: 0,
        answers: [...statuses]
          .sort(([a], [b]) => a - b)
          .map(([status, count]) => `${status}×${count}`)
          .join(' '),
      });
    });
  }
});

/**
 * Large base64 on the routes that take it (attachment content and `eml`, in add and in batch):
 * 1, 3, 4.4 and 5.9 MB of base64 text in a body under the 6 MB limit. Each is checked in linear
 * time, stored and queued, or refused with a catalogue code; never a 5xx.
 */
describe('large base64 bodies on every route that takes one', () => {
  const megabytes = [1, 3, 4.4, 5.9];
  const base64Of = (length: number) =>
    Buffer.alloc((Math.floor(length / 4) * 3) as number, 0x25).toString('base64');
  const emlOf = (length: number, from: string) => {
    const head = `From: App <${from}>\r\nTo: someone@example.net\r\nSubject: Large\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n`;
    const line = `${'x'.repeat(76)}\r\n`;
    const bytes = Math.floor((length / 4) * 3) - head.length;
    return base64(head + line.repeat(Math.max(0, Math.floor(bytes / line.length))));
  };
  const placements = {
    attachment: (length: number, _from: string) => ({
      attachments: [{ filename: 'large.pdf', content_type: 'application/pdf', content: base64Of(length) }],
    }),
    // The EML's From is the caller's own domain (send() cannot rewrite it inside the base64).
    eml: (length: number, from: string) => ({
      attachments: [],
      content: { kind: 'eml', eml: emlOf(length, from) },
    }),
  };
  const largeRoutes = routes.filter((route) => route.id === 'message-add' || route.id === 'message-batch');

  beforeAll(() => {
    useHostEnvironment();
  });

  for (const route of largeRoutes) {
    for (const [placement, place] of Object.entries(placements)) {
      it(`${route.path}: ${megabytes.join(', ')} MB of base64 as ${placement}, never a 5xx`, async () => {
        const caller = await callerFor(route, 1000);
        const answers: number[] = [];
        for (const [index, size] of megabytes.entries()) {
          const length = Math.floor(size * 1_000_000);
          const message = (template(route.id === 'message-add' ? route : { ...route, id: 'message-add' })
            .body ?? {}) as Record<string, unknown>;
          const large = { ...message, ...place(length, `app@${caller.domain}`) };
          const body = route.id === 'message-batch' ? { messages: [large] } : large;
          const testCase: Case = {
            body: JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          };
          const outcome = await send(route, testCase, caller, 2000 + index);
          assertCatalogueAnswer(
            route,
            { ...testCase, body: `${size} MB of base64 as ${placement}` },
            outcome,
          );
          answers.push(outcome.status);
        }
        // Each fits the 6 MB request limit: all are accepted.
        assert.deepEqual(answers, [200, 200, 200, 200]);
      });
    }
  }
});
