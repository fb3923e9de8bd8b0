import { existsSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { type ConsoleConfig, consoleSecurityHeaders } from '../../console/src/config-contract.ts';

/**
 * The web console on the local gateway, at `/console/`: the files Vite built into console/dist,
 * its `config.json` (where the API and the identity provider are), and the same security headers
 * as CloudFront's response headers policy on AWS (console/src/config-contract.ts), so the console
 * runs locally under the policy it runs under in production.
 */

export const consoleDist = join(import.meta.dirname, '..', '..', 'console', 'dist');
export const consolePath = '/console/';

export interface ConsoleSite {
  /** The OpenID issuer the console logs in with: AUTH_ISSUER, else the local identity provider. */
  issuer: string;
  clientId: string;
  /** The claim that names the account the API acts for (AUTH_ACCOUNT_CLAIM). */
  accountClaim: string;
  /** Whether the issuer is the local identity provider (no AUTH_ISSUER). */
  builtIn: boolean;
}

/**
 * The console's redirect URIs for a gateway URL: the URL itself and, for a loopback gateway, the
 * same port under the other loopback name, so `localhost` and `127.0.0.1` both work.
 */
export function consoleUrls(gatewayUrl: string): string[] {
  const url = new URL(consolePath, gatewayUrl);
  const urls = [url.href];
  const alias = { '127.0.0.1': 'localhost', localhost: '127.0.0.1' }[url.hostname];
  if (alias !== undefined) urls.push(`${url.protocol}//${alias}:${url.port}${consolePath}`);
  return urls;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** Answers a request under `/console`; false when the path is not the console's. */
export function handleConsoleRequest(
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  site: ConsoleSite,
): boolean {
  if (url.pathname !== '/console' && !url.pathname.startsWith(consolePath)) return false;
  request.resume();
  const headers = consoleSecurityHeaders({ connect: [new URL(site.issuer).origin], allowHttpImages: true });
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { allow: 'GET, HEAD', ...headers }).end();
    return true;
  }
  if (url.pathname === '/console') {
    response.writeHead(308, { location: `${consolePath}${url.search}`, ...headers }).end();
    return true;
  }
  const relative = url.pathname.slice(consolePath.length) || 'index.html';
  if (relative === 'config.json') {
    const config: ConsoleConfig = {
      // The API is the gateway itself: the console's own origin, whichever loopback name it was opened by.
      api_url: '/',
      issuer: site.issuer,
      client_id: site.clientId,
      account_claim: site.accountClaim,
    };
    send(response, request, 200, Buffer.from(JSON.stringify(config)), '.json', {
      ...headers,
      'cache-control': 'no-cache',
    });
    return true;
  }
  const file = inside(consoleDist, relative);
  if (file === undefined || !existsSync(file) || !statSync(file).isFile()) {
    const missing = !existsSync(join(consoleDist, 'index.html'));
    const body = missing
      ? 'The console is not built: run npm ci (or npm run console:build).\n'
      : 'Not found\n';
    send(response, request, missing ? 503 : 404, Buffer.from(body), '.txt', headers);
    return true;
  }
  // Vite names every asset by its content hash: they never change; the entry page always revalidates.
  const immutable = relative.startsWith('assets/');
  send(response, request, 200, readFileSync(file), extname(file), {
    ...headers,
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  return true;
}

/** The file a URL path names under `root`, or undefined when it is malformed or leaves `root`. */
function inside(root: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  const file = normalize(join(root, decoded));
  return file.startsWith(root + sep) ? file : undefined;
}

function send(
  response: ServerResponse,
  request: IncomingMessage,
  status: number,
  body: Buffer,
  extension: string,
  headers: Record<string, string>,
): void {
  response.writeHead(status, {
    ...headers,
    'content-type': contentTypes[extension] ?? 'application/octet-stream',
    'content-length': String(body.length),
  });
  response.end(request.method === 'HEAD' ? undefined : body);
}
