import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * A local HTTP server standing in for Gravatar (`GET <base>/<sha256>?s=&d=404`), started once by
 * the test run's global setup (test/setup/local-host.ts) before the host so the avatar function's GRAVATAR_BASE_URL points at it. Test files run
 * in other processes, so they steer it over HTTP, per address hash:
 *   PUT  /__fake/<hash>  body `image` | `missing` | `slow` | `down` | `error`   (default `missing`)
 *   GET  /__fake/<hash>  → {"hits": n, "last_query": {"s": …, "d": …}}
 * `image` answers 200 with `fakeGravatarPng`; `redirect` 302 to /moved/<hash>, which serves the image
 * (and counts `moved_hits`: the service must never follow it); `missing` 404; `error` 500; `slow` holds the answer far
 * beyond the function's timeout; `down` drops the connection without answering (as a dead host would).
 */
export type FakeBehaviour = 'image' | 'missing' | 'slow' | 'down' | 'error' | 'redirect';

const behaviours = new Set<FakeBehaviour>(['image', 'missing', 'slow', 'down', 'error', 'redirect']);

/** A valid 1 × 1 PNG: a generated avatar is never 1 × 1, so tests can tell the two apart by bytes. */
export const fakeGravatarPng = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** How long `slow` waits: far beyond any timeout the avatar function is configured with in tests. */
const slowMs = 30_000;

export interface FakeGravatar {
  /** What GRAVATAR_BASE_URL is set to. */
  baseUrl: string;
  /** Where tests steer it: `<controlUrl>/<hash>`. */
  controlUrl: string;
  stop(): Promise<void>;
}

export async function startFakeGravatar(): Promise<FakeGravatar> {
  const rules = new Map<string, FakeBehaviour>();
  const hits = new Map<string, { hits: number; last_query: Record<string, string>; moved_hits?: number }>();
  const pending = new Set<NodeJS.Timeout>();

  const serveAvatar = (request: IncomingMessage, response: ServerResponse, url: URL, hash: string) => {
    const record = hits.get(hash) ?? { hits: 0, last_query: {} };
    record.hits += 1;
    record.last_query = Object.fromEntries(url.searchParams);
    hits.set(hash, record);
    switch (rules.get(hash) ?? 'missing') {
      case 'image':
        response.writeHead(200, { 'content-type': 'image/png', 'content-length': fakeGravatarPng.length });
        return response.end(fakeGravatarPng);
      case 'missing':
        return response.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      case 'redirect':
        return response.writeHead(302, { location: `/moved/${hash}` }).end();
      case 'error':
        return response.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error');
      case 'down':
        return request.socket.destroy();
      case 'slow': {
        const timer = setTimeout(() => {
          pending.delete(timer);
          if (!response.destroyed)
            response.writeHead(200, { 'content-type': 'image/png' }).end(fakeGravatarPng);
        }, slowMs);
        pending.add(timer);
        return;
      }
    }
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake-gravatar');
    const control = /^\/__fake\/([0-9a-f]{64})$/.exec(url.pathname);
    if (control !== null) {
      const hash = control[1] as string;
      if (request.method === 'PUT') {
        let body = '';
        request.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        request.on('end', () => {
          const behaviour = body.trim() as FakeBehaviour;
          if (!behaviours.has(behaviour)) return response.writeHead(400).end();
          rules.set(hash, behaviour);
          response.writeHead(204).end();
        });
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end(JSON.stringify(hits.get(hash) ?? { hits: 0, last_query: {} }));
    }
    const moved = /^\/moved\/([0-9a-f]{64})$/.exec(url.pathname);
    if (moved !== null) {
      const record = hits.get(moved[1] as string) ?? { hits: 0, last_query: {} };
      record.moved_hits = (record.moved_hits ?? 0) + 1;
      hits.set(moved[1] as string, record);
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': fakeGravatarPng.length });
      return response.end(fakeGravatarPng);
    }
    const avatar = /^\/avatar\/([0-9a-f]{64})$/.exec(url.pathname);
    if (request.method === 'GET' && avatar !== null)
      return serveAvatar(request, response, url, avatar[1] as string);
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const origin = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${origin}/avatar`,
    controlUrl: `${origin}/__fake`,
    stop: async () => {
      for (const timer of pending) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Test-side helpers (another process than the fake): steer and observe it over HTTP. */
export async function setGravatar(controlUrl: string, hash: string, behaviour: FakeBehaviour): Promise<void> {
  const response = await fetch(`${controlUrl}/${hash}`, { method: 'PUT', body: behaviour });
  if (response.status !== 204) throw new Error(`fake Gravatar refused ${behaviour}: ${response.status}`);
}

export async function gravatarHits(
  controlUrl: string,
  hash: string,
): Promise<{ hits: number; last_query: Record<string, string>; moved_hits?: number }> {
  const response = await fetch(`${controlUrl}/${hash}`);
  return (await response.json()) as { hits: number; last_query: Record<string, string>; moved_hits?: number };
}
