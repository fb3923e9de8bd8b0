import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, it } from 'vitest';
import { call, hostInfo, uniqueAccount } from '../support/host.ts';

/*
 * The local identity provider as an OpenID provider, over HTTP as a browser would use it (a cookie
 * jar, redirects followed by hand): discovery, the authorization-code flow with PKCE through the
 * development login page, JWT access tokens the API accepts with exactly the scopes chosen, and the
 * things it must refuse (key injection, CORS from other origins, a flow without PKCE).
 */
const info = hostInfo();
const consoleUrl = new URL('/console/', info.url).href;
const consoleOrigin = new URL(info.url).origin;
const clientId = 'svc-mail-console';

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  end_session_endpoint: string;
  code_challenge_methods_supported: string[];
  response_types_supported: string[];
}

async function discovery(): Promise<Discovery> {
  const response = await fetch(new URL('/.well-known/openid-configuration', info.issuer));
  assert.equal(response.status, 200);
  return (await response.json()) as Discovery;
}

/** Cookies by name, as a browser keeps them for the provider's origin. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = (pair as string).split('=');
      this.cookies.set((name as string).trim(), value.join('='));
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

async function visit(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
  });
  jar.take(response);
  return response;
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

interface LoginChoice {
  account: string;
  scopes: readonly string[];
  lifetime?: number;
  action?: 'sign-in' | 'cancel';
}

/**
 * Runs the authorization request and the login page; answers where the provider finally sends
 * the browser back to the console (with `code` or `error`).
 */
async function authorize(
  jar: CookieJar,
  choice: LoginChoice,
  params: Record<string, string>,
): Promise<{ callback: URL; loginPage: string }> {
  const { authorization_endpoint } = await discovery();
  const url = new URL(authorization_endpoint);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const start = await visit(jar, url.href);
  assert.equal(start.status, 303, await start.text());
  const interaction = new URL(start.headers.get('location') as string, info.issuer);
  assert.match(interaction.pathname, /^\/interaction\/[\w-]+$/);

  const page = await visit(jar, interaction.href);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  const loginPage = await page.text();

  const form = new URLSearchParams({
    account: choice.account,
    lifetime: String(choice.lifetime ?? 3600),
    action: choice.action ?? 'sign-in',
  });
  for (const scope of choice.scopes) form.append('scope', scope);
  let response = await visit(jar, interaction.href, {
    method: 'POST',
    body: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  // The provider resumes the authorization request, then redirects to the console.
  for (let hops = 0; hops < 5 && response.status >= 300 && response.status < 400; hops += 1) {
    const next = new URL(response.headers.get('location') as string, info.issuer);
    if (next.href.startsWith(consoleUrl)) return { callback: next, loginPage };
    response = await visit(jar, next.href);
  }
  throw new Error(`the provider did not send the browser back: ${response.status} ${await response.text()}`);
}

function authorizationParams(challenge: string, scope = 'openid messages:read'): Record<string, string> {
  return {
    client_id: clientId,
    redirect_uri: consoleUrl,
    response_type: 'code',
    scope,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
  };
}

async function exchange(code: string, verifier: string, origin = consoleOrigin): Promise<Response> {
  const { token_endpoint } = await discovery();
  return fetch(token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: consoleUrl,
      client_id: clientId,
      code_verifier: verifier,
    }),
  });
}

function decode(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = jwt.split('.') as [string, string];
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString()),
  };
}

describe('local identity provider: OpenID discovery and keys', () => {
  it('publishes discovery with the authorization, token, JWKS and end-session endpoints and S256 PKCE', async () => {
    const document = await discovery();
    assert.equal(document.issuer, info.issuer);
    for (const endpoint of [document.authorization_endpoint, document.token_endpoint, document.jwks_uri])
      assert.ok(endpoint.startsWith(`${info.issuer}/`), endpoint);
    assert.equal(document.jwks_uri, info.jwksUrl, 'the key set stays where AUTH_JWKS_URL points');
    assert.ok(document.end_session_endpoint);
    assert.deepEqual(document.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(document.response_types_supported, ['code'], 'no implicit or hybrid flow');
  });

  it('refuses key injection: POST /keys is not a route, the key set keeps its one key, and a token signed with the offered key is 110', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const offered = { ...(await exportJWK(publicKey)), kid: 'injected', alg: 'ES256', use: 'sig' };
    for (const path of ['/keys', '/jwks', '/.well-known/jwks.json']) {
      const injected = await fetch(new URL(path, info.issuer), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://attacker.example' },
        body: JSON.stringify(offered),
      });
      assert.ok([404, 405].includes(injected.status), `${path}: ${injected.status}`);
      assert.equal(injected.headers.get('access-control-allow-origin'), null);
    }
    const keys = (await (await fetch(info.jwksUrl)).json()) as { keys: Array<{ kid: string; d?: string }> };
    assert.deepEqual(
      keys.keys.map((key) => key.kid),
      [info.privateJwk.kid],
    );
    assert.ok(
      keys.keys.every((key) => key.d === undefined),
      'only public keys',
    );

    const forged = await new SignJWT({ scope: 'messages:read' })
      .setProtectedHeader({ alg: 'ES256', kid: 'injected' })
      .setIssuer(info.issuer)
      .setAudience(info.audience)
      .setSubject(uniqueAccount('forged'))
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    const refused = await call('POST', '/message/query-1.0', { token: forged, body: { filters: {} } });
    assert.equal(refused.status, 401);
    assert.equal((refused.body as { error: { code: number } }).error.code, 110);
  });

  it('answers CORS only to the console origin, never with *', async () => {
    const { token_endpoint } = await discovery();
    for (const url of [`${info.issuer}/.well-known/openid-configuration`, info.jwksUrl]) {
      const anonymous = await fetch(url);
      assert.equal(anonymous.headers.get('access-control-allow-origin'), null, url);
      const foreign = await fetch(url, { headers: { origin: 'http://attacker.example' } });
      assert.equal(foreign.headers.get('access-control-allow-origin'), null, url);
      const own = await fetch(url, { headers: { origin: consoleOrigin } });
      assert.equal(own.headers.get('access-control-allow-origin'), consoleOrigin, url);
    }
    const preflight = (origin: string) =>
      fetch(token_endpoint, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
    assert.equal(
      (await preflight('http://attacker.example')).headers.get('access-control-allow-origin'),
      null,
    );
    assert.equal((await preflight(consoleOrigin)).headers.get('access-control-allow-origin'), consoleOrigin);
  });
});

describe('local identity provider: authorization code with PKCE', () => {
  it('signs in on the development page and issues a JWT access token the API accepts, with only the chosen scopes', async () => {
    const jar = new CookieJar();
    const account = uniqueAccount('oidc');
    const params = authorizationParams(pkce().challenge, 'openid messages:read suppressions:read');
    const { callback, loginPage } = await authorize(jar, { account, scopes: ['messages:read'] }, params);
    assert.match(loginPage, /name="scope" value="messages:read" checked/);
    assert.match(loginPage, /name="scope" value="suppressions:read" checked/);
    assert.match(
      loginPage,
      /name="scope" value="domains:write">/,
      'a scope not asked for is not pre-checked',
    );
    assert.doesNotMatch(loginPage, /<script/i);
    assert.equal(callback.searchParams.get('state'), params.state);
    assert.equal(callback.searchParams.get('iss'), info.issuer);
    const code = callback.searchParams.get('code');
    assert.ok(code, callback.href);

    const wrongVerifier = await exchange(code, pkce().verifier);
    assert.equal(wrongVerifier.status, 400);
    assert.equal(((await wrongVerifier.json()) as { error: string }).error, 'invalid_grant');

    // A code is single-use: the failed exchange consumed it, so sign in again (silently: the
    // provider's session and grant are there) and exchange the new code with the right verifier.
    const again = pkce();
    const resumed = await visit(
      jar,
      `${(await discovery()).authorization_endpoint}?${new URLSearchParams(authorizationParams(again.challenge, 'openid messages:read suppressions:read'))}`,
    );
    assert.equal(resumed.status, 303);
    const silent = new URL(resumed.headers.get('location') as string, info.issuer);
    assert.ok(silent.href.startsWith(consoleUrl), `no login page the second time: ${silent.href}`);
    const tokenResponse = await exchange(silent.searchParams.get('code') as string, again.verifier);
    assert.equal(tokenResponse.status, 200);
    assert.equal(tokenResponse.headers.get('access-control-allow-origin'), consoleOrigin);
    const tokens = (await tokenResponse.json()) as {
      access_token: string;
      id_token: string;
      token_type: string;
      expires_in: number;
      scope: string;
    };
    assert.equal(tokens.token_type, 'Bearer');
    assert.ok(tokens.expires_in > 3500 && tokens.expires_in <= 3600, String(tokens.expires_in));
    const { header, payload } = decode(tokens.access_token);
    assert.equal(header.typ, 'at+jwt');
    assert.equal(header.kid, info.privateJwk.kid);
    assert.equal(payload.iss, info.issuer);
    assert.equal(payload.aud, info.audience);
    assert.equal(payload.sub, account);
    assert.equal(payload.scope, 'messages:read', 'suppressions:read was asked for but not chosen');
    assert.equal(payload.client_id, clientId);
    assert.equal(decode(tokens.id_token).payload.sub, account);

    const allowed = await call('POST', '/message/query-1.0', {
      token: tokens.access_token,
      body: { filters: {} },
    });
    assert.equal(allowed.status, 200, allowed.text);
    const denied = await call('POST', '/suppression/query-1.0', {
      token: tokens.access_token,
      body: { filters: {} },
    });
    assert.equal(denied.status, 403);
    assert.equal((denied.body as { error: { code: number } }).error.code, 113);
  });

  it('issues a token for the session length chosen on the page', async () => {
    const { verifier, challenge } = pkce();
    const { callback } = await authorize(
      new CookieJar(),
      { account: uniqueAccount('short'), scopes: ['messages:read'], lifetime: 30 },
      authorizationParams(challenge),
    );
    const tokens = (await (await exchange(callback.searchParams.get('code') as string, verifier)).json()) as {
      access_token: string;
      expires_in: number;
    };
    assert.ok(tokens.expires_in <= 30 && tokens.expires_in > 20, String(tokens.expires_in));
    const { payload } = decode(tokens.access_token);
    assert.ok((payload.exp as number) - (payload.iat as number) === 30);
  });

  it('sends the browser back with access_denied when the user cancels', async () => {
    const { callback } = await authorize(
      new CookieJar(),
      { account: 'anyone', scopes: [], action: 'cancel' },
      authorizationParams(pkce().challenge),
    );
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.equal(callback.searchParams.get('code'), null);
  });

  it('requires PKCE and a registered redirect URI', async () => {
    const { authorization_endpoint } = await discovery();
    const { code_challenge: _, code_challenge_method: __, ...withoutPkce } = authorizationParams('x');
    const noPkce = await fetch(`${authorization_endpoint}?${new URLSearchParams(withoutPkce)}`, {
      redirect: 'manual',
    });
    const back = new URL(noPkce.headers.get('location') as string, info.issuer);
    assert.equal(back.searchParams.get('error'), 'invalid_request', back.href);

    const foreign = await fetch(
      `${authorization_endpoint}?${new URLSearchParams({ ...authorizationParams(pkce().challenge), redirect_uri: 'http://attacker.example/' })}`,
      { redirect: 'manual' },
    );
    assert.equal(foreign.status, 400, 'no redirect to an unregistered URI');
  });
});
