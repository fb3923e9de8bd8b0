import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import Provider, { type Configuration, errors } from 'oidc-provider';
import { scopes as allScopes } from '../../shared/platform/auth/scopes.ts';
import { defaultLifetimeSeconds, handleDevLogin, providerPages } from './dev-login.ts';
import { consoleClientId, localAudience, localResource } from './identity.ts';
import { memoryAdapterFactory } from './oidc-memory-adapter.ts';

export { consoleClientId, localAudience, localResource };

export interface IdentityProvider {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** Private signing key (JWK with kid and alg), for tests that need to sign their own tokens. */
  privateJwk: JWK;
  /** Signs a token directly with the provider's key (the printed dev token, tests, the benchmark). */
  mintToken(options?: MintOptions): Promise<string>;
  /**
   * Registers the web console (OpenID client `svc-mail-console`) at these URLs, its redirect URIs,
   * and opens the provider: until then every request is answered 503. Their origins are the only
   * ones the provider answers CORS requests from.
   */
  allowConsole(consoleUrls: readonly string[]): void;
  stop(): Promise<void>;
}

export interface MintOptions {
  account?: string;
  scopes?: readonly string[];
  expiresInSeconds?: number;
}

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

type ProviderKey = NonNullable<Configuration['jwks']>['keys'][number];
const jwksPath = '/.well-known/jwks.json';

interface ProviderSettings {
  privateJwk: JWK;
  consoleUrls: readonly string[];
  consoleOrigins: ReadonlySet<string>;
  lifetimes: Map<string, number>;
}

/**
 * oidc-provider's configuration: one public client (the console: authorization code with PKCE, no
 * secret), the API as the one resource server (JWT access tokens for `localAudience`, with the
 * service's scopes), the same signing key as `mintToken`, and no built-in interactions (the
 * development login page answers them).
 */
function configuration(settings: ProviderSettings): Configuration {
  const serviceScopes = Object.keys(allScopes).join(' ');
  const pages = providerPages(() => [...settings.consoleOrigins]);
  return {
    clients: [
      {
        client_id: consoleClientId,
        client_name: 'the svc-mail console',
        application_type: 'web',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [...settings.consoleUrls],
        post_logout_redirect_uris: [...settings.consoleUrls],
      },
    ],
    jwks: { keys: [settings.privateJwk as ProviderKey] },
    // The key set stays where the provider published it before it was an OpenID provider.
    routes: { jwks: jwksPath },
    // Cookie signing keys live as long as the process: a restart signs the user out of the provider.
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub'] },
    scopes: ['openid'],
    // The authorization code flow only (no implicit or hybrid flow hands a token to the browser's address bar).
    responseTypes: ['code'],
    pkce: { required: () => true },
    adapter: memoryAdapterFactory(),
    renderError: pages.renderError,
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    clientBasedCORS: (_ctx, origin) => settings.consoleOrigins.has(origin),
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: pages.logoutSource,
        postLogoutSuccessSource: pages.postLogoutSuccessSource,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => localResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== localResource) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
          return {
            scope: serviceScopes,
            audience: localAudience,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    ttl: {
      // The session length chosen on the login page, per grant.
      AccessToken: (_ctx, token) => settings.lifetimes.get(token.grantId ?? '') ?? defaultLifetimeSeconds,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      Grant: 12 * 3600,
      Session: 12 * 3600,
    },
  };
}

/**
 * The local OpenID provider (oidc-provider): discovery, authorize, token, JWKS and end-session
 * endpoints, authorization code with PKCE for the console, JWT access tokens for the API, and a
 * development login page. It publishes exactly one key, the one in DATA_DIR/idp, which also signs
 * `mintToken`'s tokens: nothing can add a key to its JWKS over HTTP. It answers CORS only to the
 * console's origins (never `*`).
 */
export async function startIdentityProvider(dataDir: string, port = 0): Promise<IdentityProvider> {
  const privateJwk = await signingKey(dataDir);
  const lifetimes = new Map<string, number>();
  let consoleOrigins: ReadonlySet<string> = new Set();
  let handle: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;

  const server: Server = createServer((request, response) => {
    if (handle === undefined) {
      request.resume();
      response.writeHead(503, { 'retry-after': '1' }).end();
      return;
    }
    handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const issuer = `http://127.0.0.1:${actualPort}`;
  const key = await importJWK(privateJwk, 'RS256');

  return {
    issuer,
    audience: localAudience,
    jwksUrl: `${issuer}${jwksPath}`,
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
    allowConsole: (consoleUrls) => {
      consoleOrigins = new Set(consoleUrls.map((url) => new URL(url).origin));
      const origins = consoleOrigins;
      const provider = new Provider(
        issuer,
        configuration({ privateJwk, consoleUrls, consoleOrigins: origins, lifetimes }),
      );
      // CORS only for the console's origins: oidc-provider answers discovery and JWKS to any origin
      // (and with `*` when there is none); whatever it set is removed for every other caller.
      provider.use(async (ctx, next) => {
        await next();
        if (origins.has(ctx.get('origin'))) return;
        for (const name of Object.keys(ctx.response.headers))
          if (name.startsWith('access-control-')) ctx.remove(name);
      });
      const callback = provider.callback();
      const devLogin = {
        resource: localResource,
        consoleOrigins: () => [...origins],
        rememberLifetime: (grantId: string, seconds: number) => lifetimes.set(grantId, seconds),
      };
      handle = (request, response) => {
        if (request.url?.startsWith('/interaction/')) {
          handleDevLogin(provider, request, response, devLogin).catch(() => {
            if (!response.headersSent) response.writeHead(500).end();
          });
          return;
        }
        callback(request, response);
      };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
