import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { scopes as allScopes } from '../../shared/routes.ts';

export interface IdentityProvider {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** Private signing key (JWK with kid and alg), for tests that need to sign their own tokens. */
  privateJwk: JWK;
  mintToken(options?: MintOptions): Promise<string>;
  stop(): Promise<void>;
}

export interface MintOptions {
  account?: string;
  scopes?: readonly string[];
  expiresInSeconds?: number;
}

export const localAudience = 'svc-mail';

/** Loads the signing key from DATA_DIR, or creates one, so that printed tokens survive restarts. */
async function signingKey(dataDir: string): Promise<JWK> {
  const file = join(dataDir, 'idp', 'signing-key.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as JWK;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const jwk = {
    ...(await exportJWK(privateKey)),
    alg: 'RS256',
    use: 'sig',
    kid: `local-${Date.now().toString(36)}`,
  };
  mkdirSync(join(dataDir, 'idp'), { recursive: true });
  writeFileSync(file, JSON.stringify(jwk), { mode: 0o600 });
  return jwk;
}

export function publicPart(jwk: JWK): JWK {
  const { kty, n, e, crv, x, y, kid, alg, use } = jwk;
  return Object.fromEntries(
    Object.entries({ kty, n, e, crv, x, y, kid, alg, use }).filter(([, v]) => v !== undefined),
  );
}

/**
 * A local OpenID-style identity provider: one RSA key, its JWKS over HTTP, and a token minter.
 * Extra keys can be published (for rotation tests) through `POST /keys` with a public JWK.
 */
export async function startIdentityProvider(dataDir: string, port = 0): Promise<IdentityProvider> {
  const privateJwk = await signingKey(dataDir);
  const published: JWK[] = [publicPart(privateJwk)];
  const server: Server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/.well-known/jwks.json') {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
      response.end(JSON.stringify({ keys: published }));
      return;
    }
    if (request.method === 'GET' && request.url === '/.well-known/openid-configuration') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ issuer, jwks_uri: jwksUrl }));
      return;
    }
    if (request.method === 'POST' && request.url === '/keys') {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        try {
          published.push(publicPart(JSON.parse(body) as JWK));
          response.writeHead(204).end();
        } catch {
          response.writeHead(400).end();
        }
      });
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const issuer = `http://127.0.0.1:${actualPort}`;
  const jwksUrl = `${issuer}/.well-known/jwks.json`;
  const key = await importJWK(privateJwk, 'RS256');

  return {
    issuer,
    audience: localAudience,
    jwksUrl,
    privateJwk,
    mintToken: async ({
      account = 'dev-account',
      scopes = Object.keys(allScopes),
      expiresInSeconds = 12 * 3600,
    } = {}) =>
      new SignJWT({ scope: scopes.join(' ') })
        .setProtectedHeader({ alg: 'RS256', kid: privateJwk.kid as string, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(localAudience)
        .setSubject(account)
        .setIssuedAt()
        .setExpirationTime(`${expiresInSeconds}s`)
        .sign(key),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
