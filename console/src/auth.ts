import * as oauth from 'oauth4webapi';
import { accountOf } from './account.ts';
import { type ConsoleConfig, consoleScopes } from './config-contract.ts';

/**
 * Sign-in with OpenID Connect: authorization code with PKCE (oauth4webapi), a public client, the
 * tokens in memory only. What survives the redirect to the provider and back is kept in
 * sessionStorage until the code is exchanged: the state, nonce, PKCE verifier and the page to
 * return to (the hash route), so an expired session comes back to the page it left.
 */

export interface Session {
  /**
   * The account the API will act for (the configured account claim, see account.ts); undefined
   * when no token the console can read names it.
   */
  readonly account: string | undefined;
  readonly scopes: ReadonlySet<string>;
  /** The access token; when it has expired, a new sign-in that returns to the current page. */
  accessToken(): Promise<string>;
  /** The API refused the token (expired or revoked): sign in again, keeping the page. */
  renew(code: number | undefined): Promise<never>;
  signOut(): void;
}

/** The sign-in could not complete (the user cancelled, the provider refused, a loop was stopped). */
export class SignInError extends Error {
  constructor(
    message: string,
    readonly retry: () => void,
  ) {
    super(message);
    this.name = 'SignInError';
  }
}

const pendingKey = 'svc-mail-console:pending-sign-in';
/** A token the API refuses this soon after it was issued is not retried (no redirect loop). */
const loopGuardMs = 30_000;
/** Renew this long before the token expires, so a request never leaves with a dying token. */
const expiryMarginMs = 5_000;
const loopback = new Set(['127.0.0.1', 'localhost', '[::1]']);

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
}

const never = new Promise<never>(() => undefined);

/** The console's own URL without query or hash: its registered redirect URI. */
function redirectUri(): string {
  const url = new URL(location.href);
  url.search = '';
  url.hash = '';
  url.pathname = url.pathname.replace(/index\.html$/, '');
  return url.href;
}

function currentRoute(): string {
  return location.hash.length > 1 ? location.hash : '#/activity';
}

function takePending(): Pending | undefined {
  const raw = sessionStorage.getItem(pendingKey);
  sessionStorage.removeItem(pendingKey);
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw) as Pending;
  } catch {
    return undefined;
  }
}

export async function openSession(config: ConsoleConfig): Promise<Session> {
  const issuer = new URL(config.issuer);
  // oauth4webapi refuses plain http; the local provider on this machine is the one exception.
  const http =
    issuer.protocol === 'http:' && loopback.has(issuer.hostname)
      ? { [oauth.allowInsecureRequests]: true }
      : {};
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http }),
  );
  const client: oauth.Client = { client_id: config.client_id };
  const resource: Record<string, string> = config.resource === undefined ? {} : { resource: config.resource };

  const signIn = async (returnTo: string): Promise<never> => {
    const pending: Pending = {
      state: oauth.generateRandomState(),
      nonce: oauth.generateRandomNonce(),
      verifier: oauth.generateRandomCodeVerifier(),
      returnTo,
    };
    sessionStorage.setItem(pendingKey, JSON.stringify(pending));
    const url = new URL(as.authorization_endpoint as string);
    const parameters = {
      client_id: client.client_id,
      redirect_uri: redirectUri(),
      response_type: 'code',
      scope: consoleScopes.join(' '),
      code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
      ...resource,
    };
    for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
    location.assign(url.href);
    return never;
  };

  const callback = new URL(location.href);
  const pending = takePending();
  if (pending === undefined || !(callback.searchParams.has('code') || callback.searchParams.has('error'))) {
    return signIn(currentRoute());
  }
  // The code leaves the address bar at once; the page the sign-in started from comes back.
  history.replaceState(null, '', `${redirectUri()}${pending.returnTo}`);
  const retry = () => void signIn(pending.returnTo);
  let tokens: oauth.TokenEndpointResponse;
  try {
    const parameters = oauth.validateAuthResponse(as, client, callback, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      parameters,
      redirectUri(),
      pending.verifier,
      { ...http, additionalParameters: resource },
    );
    tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
  } catch (error) {
    const reason =
      error instanceof oauth.AuthorizationResponseError
        ? (error.error_description ?? error.error)
        : error instanceof Error
          ? error.message
          : String(error);
    throw new SignInError(`Sign-in did not complete: ${reason}`, retry);
  }

  const issuedAt = Date.now();
  const expiresAt = issuedAt + (tokens.expires_in ?? 300) * 1000;
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  const idToken = tokens.id_token;
  const accessToken = tokens.access_token;
  return {
    account: accountOf(accessToken, claims, config.account_claim ?? 'sub'),
    scopes: new Set((tokens.scope ?? consoleScopes.join(' ')).split(' ')),
    accessToken: async () =>
      Date.now() >= expiresAt - expiryMarginMs ? signIn(currentRoute()) : accessToken,
    renew: async (code) => {
      if (code !== 105 && Date.now() - issuedAt < loopGuardMs) {
        throw new SignInError(
          `The API refused the token the identity provider just issued (code ${code ?? 'unknown'}): check that the API trusts this issuer and audience.`,
          () => void signIn(currentRoute()),
        );
      }
      return signIn(currentRoute());
    },
    signOut: () => {
      const endSession = as.end_session_endpoint;
      if (endSession === undefined) {
        location.reload();
        return;
      }
      const url = new URL(endSession);
      url.searchParams.set('client_id', client.client_id);
      url.searchParams.set('post_logout_redirect_uri', redirectUri());
      if (idToken !== undefined) url.searchParams.set('id_token_hint', idToken);
      location.assign(url.href);
    },
  };
}
