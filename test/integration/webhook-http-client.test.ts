import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { attemptPost, maxResponseBytes, noAnswer, type Resolver } from '../../shared/webhooks/http-target.ts';

/**
 * The webhook HTTP client against real local servers (docs/webhooks.md, "The HTTP client"): one
 * deadline covers the lookup, connect, TLS, the headers and the body; at most `maxResponseBytes` of
 * an answer are read; the socket is closed whenever the attempt ends; and what a tenant sees of a
 * failure is the same text whether the port was closed, silent, spoke TLS or trickled its answer.
 */
const policy = { requireHttps: false, allowPrivate: true };
const timeoutMs = 1_500;
const loopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

interface Tracked {
  url: string;
  server: Server | HttpServer;
  /** Sockets the server accepted, and whether each was closed. */
  sockets: Array<{ socket: Socket; closed: boolean }>;
}

function track(server: Server | HttpServer, scheme = 'http'): Promise<Tracked> {
  const tracked: Tracked = { url: '', server, sockets: [] };
  server.on('connection', (socket: Socket) => {
    const entry = { socket, closed: false };
    tracked.sockets.push(entry);
    socket.on('close', () => {
      entry.closed = true;
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      tracked.url = `${scheme}://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
      resolve(tracked);
    }),
  );
}

async function allClosed(tracked: Tracked): Promise<void> {
  await vi.waitFor(
    () =>
      assert.ok(
        tracked.sockets.every((entry) => entry.closed),
        'a socket of the attempt is still open',
      ),
    { timeout: 10_000, interval: 20 },
  );
}

let trickle: Tracked;
let silent: Tracked;
let flood: Tracked;
let plainTls: Tracked;
let floodFinished = false;
let closedPort = 0;

beforeAll(async () => {
  // 200 and its headers at once, then one byte every 100 ms, forever.
  trickle = await track(
    createHttpServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.flushHeaders();
      const timer = setInterval(() => response.write('.'), 100);
      response.on('close', () => clearInterval(timer));
    }),
  );
  // Accepts the connection, reads what comes, and never says a word.
  silent = await track(createServer((socket) => socket.resume()));
  // 200, then 64 MB as fast as the reader takes them (more than any socket buffer holds).
  flood = await track(
    createHttpServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      let left = 1024;
      const pump = () => {
        while (left > 0 && !response.destroyed) {
          left -= 1;
          if (left === 0) {
            response.end(chunk, () => {
              floodFinished = true;
            });
            return;
          }
          if (!response.write(chunk)) {
            response.once('drain', pump);
            return;
          }
        }
      };
      pump();
    }),
  );
  // https to a port that speaks plain HTTP: the TLS handshake fails.
  plainTls = await track(
    createHttpServer((_request, response) => response.end('plain')),
    'https',
  );
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});

afterAll(async () => {
  for (const tracked of [trickle, silent, flood, plainTls]) {
    for (const entry of tracked.sockets) entry.socket.destroy();
    await new Promise<void>((resolve) => tracked.server.close(() => resolve()));
  }
});

const post = (url: string, resolve: Resolver = loopback) =>
  attemptPost(new URL(url), { 'content-type': 'application/json' }, '{"type":"test"}', {
    policy,
    resolve,
    timeoutMs,
  });

describe('the webhook HTTP client', () => {
  it('a body that trickles forever ends at the deadline: no answer, and the socket is closed', async () => {
    const started = Date.now();
    const result = await post(trickle.url);
    assert.equal(result.statusCode, undefined, 'an answer without its whole body is no answer');
    assert.equal(result.error, noAnswer(timeoutMs));
    assert.match(result.cause ?? '', /deadline while reading the body \(status 200/);
    assert.ok(Date.now() - started >= timeoutMs - 50, 'it waited for its deadline');
    assert.equal(trickle.sockets.length, 1);
    await allClosed(trickle);
  });

  it('a server that accepts and never answers ends at the deadline, socket closed', async () => {
    const result = await post(silent.url);
    assert.equal(result.error, noAnswer(timeoutMs));
    assert.match(result.cause ?? '', /deadline before the response headers/);
    await allClosed(silent);
  });

  it(`reads at most ${maxResponseBytes} bytes of a large answer, then closes the socket`, async () => {
    const result = await post(flood.url);
    assert.equal(result.statusCode, 200);
    assert.equal(result.error, undefined);
    await allClosed(flood);
    assert.equal(floodFinished, false, 'the 64 MB were never all read');
  });

  it('the DNS lookup is under the same deadline', async () => {
    const hanging: Resolver = () => new Promise(() => undefined);
    const started = Date.now();
    const result = await post('http://hangs.example.test/hook', hanging);
    assert.equal(result.error, 'The host name hangs.example.test does not resolve');
    assert.ok(Date.now() - started >= timeoutMs - 50);
  });

  it('a closed port, a silent one and a failed TLS handshake read the same to the tenant', async () => {
    const refused = await post(`http://127.0.0.1:${closedPort}/hook`);
    const tls = await post(plainTls.url);
    const quiet = await post(silent.url);
    assert.equal(refused.error, noAnswer(timeoutMs));
    assert.equal(tls.error, noAnswer(timeoutMs));
    assert.equal(quiet.error, noAnswer(timeoutMs));
    for (const result of [refused, tls, quiet]) {
      assert.equal(result.statusCode, undefined);
      assert.doesNotMatch(result.error ?? '', /ECONN|EPROTO|SSL|TLS|127\.0\.0\.1|refused by/i);
    }
    // The operator's log keeps the precise cause.
    assert.match(refused.cause ?? '', /ECONNREFUSED/);
    await allClosed(plainTls);
    await allClosed(silent);
  });
});
