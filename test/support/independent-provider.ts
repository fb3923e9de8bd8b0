import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Configuration, errors } from 'oidc-provider';
import { consoleScopes } from '../../console/src/config-contract.ts';

/**
 * A second OpenID provider, independent of the local host's built-in one, for the console's
 * sign-in with a configured issuer (AUTH_ISSUER): its own issuer URL and port, its own ES256 key,
 * its own client id, oidc-provider's own login and consent pages, JWT access tokens for its own
 * audience, and the account in a claim of its own (`tenant`) that differs from the person's `sub`.
 * It opens once the console's redirect URIs are known (the host's port is free-picked).
 */
export interface IndependentProvider {
  issuer: string;
  audience: string;
  jwksUrl: string;
  clientId: string;
  accountClaim: string;
  /** The account (the `tenant` claim) each login acts for. */
  accounts: Readonly<Record<string, string>>;
  /** Registers the console's redirect URIs and starts answering. */
  open(consoleUrls: readonly string[]): void;
  close(): Promise<void>;
}

export async function startIndependentProvider(
  accounts: Readonly<Record<string, string>>,
): Promise<IndependentProvider> {
  const clientId = 'acme-mail-console';
  const audience = 'https://mail-api.acme.test';
  const accountClaim = 'tenant';
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const key = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: 'acme-1' };

  let handle: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  const server = createServer((request, response) => {
    if (handle !== undefined) return handle(request, response);
    request.resume();
    response.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const configuration = (consoleUrls: readonly string[]): Configuration => {
    const origins = new Set(consoleUrls.map((url) => new URL(url).origin));
    return {
      clients: [
        {
          client_id: clientId,
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code'],
          response_types: ['code'],
          redirect_uris: [...consoleUrls],
          post_logout_redirect_uris: [...consoleUrls],
          id_token_signed_response_alg: 'ES256',
        },
      ],
      jwks: { keys: [key as NonNullable<Configuration['jwks']>['keys'][number]] },
      cookies: { keys: [randomBytes(32).toString('base64url')] },
      claims: { openid: ['sub'] },
      scopes: ['openid'],
      responseTypes: ['code'],
      pkce: { required: () => true },
      clientBasedCORS: (_ctx, origin) => origins.has(origin),
      findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
      extraTokenClaims: (_ctx, token) => {
        const account = accounts[(token as { accountId?: string }).accountId ?? ''];
        return account === undefined ? undefined : { [accountClaim]: account };
      },
      ttl: {
        AccessToken: 600,
        AuthorizationCode: 60,
        IdToken: 600,
        Interaction: 600,
        Grant: 600,
        Session: 600,
      },
      features: {
        devInteractions: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => audience,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator) => {
            if (indicator !== audience) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
            return {
              scope: consoleScopes.filter((scope) => scope !== 'openid').join(' '),
              audience,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: 'ES256' } },
            };
          },
        },
      },
    };
  };

  return {
    issuer,
    audience,
    jwksUrl: `${issuer}/jwks`,
    clientId,
    accountClaim,
    accounts,
    open: (consoleUrls) => {
      handle = new Provider(issuer, configuration(consoleUrls)).callback();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
