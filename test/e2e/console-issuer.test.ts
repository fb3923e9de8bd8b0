import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import type { Request } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { consoleScopes } from '../../console/src/config-contract.ts';
import { consoleUrls } from '../../infra/local/console-site.ts';
import { type ConsoleBrowser, waitForConsole } from '../support/browser.ts';
import { launchChromium } from '../support/chromium.ts';
import { type IndependentProvider, startIndependentProvider } from '../support/independent-provider.ts';
import { type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';

/*
 * The console with a configured issuer: a local host whose AUTH_ISSUER names a second OpenID
 * provider (not the built-in one) points its console there, the browser signs in on that provider
 * with PKCE S256, the token it issues works against the API, and the header names the account the
 * API acts for (the provider's `tenant` claim), not the person's `sub`.
 */
let provider: IndependentProvider;
let host: SecondaryHost;
let browser: ConsoleBrowser;
const person = 'ada.lovelace';
const account = 'acme-tenant-7';

beforeAll(async () => {
  provider = await startIndependentProvider({ [person]: account });
  host = await startSecondaryHost({
    AUTH_ISSUER: provider.issuer,
    AUTH_AUDIENCE: provider.audience,
    AUTH_JWKS_URL: provider.jwksUrl,
    AUTH_ACCOUNT_CLAIM: provider.accountClaim,
    AUTH_ALGORITHMS: 'ES256',
    AUTH_REQUIRED_TYP: 'at+jwt',
    CONSOLE_CLIENT_ID: provider.clientId,
  });
  provider.open(consoleUrls(host.url));
  const chromium = await launchChromium();
  chromium.context.setDefaultTimeout(60_000);
  const page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
  browser = { ...chromium, page, consoleUrl: new URL('/console/', host.url).href };
});

afterAll(async () => {
  await browser?.close();
  await host?.stop();
  await provider?.close();
});

describe('console: sign-in with the configured issuer', () => {
  it("names the configured issuer, client and account claim in config.json, not the built-in provider's", async () => {
    const response = await fetch(new URL('config.json', browser.consoleUrl));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      api_url: '/',
      issuer: provider.issuer,
      client_id: provider.clientId,
      account_claim: 'tenant',
    });
    assert.notEqual(provider.issuer, host.issuer, 'the built-in provider is another one');
  });

  it('signs in at that provider with PKCE S256; its token works against the API; the header names the account', async () => {
    const { page, consoleUrl } = browser;
    const discovery = (await (await fetch(`${provider.issuer}/.well-known/openid-configuration`)).json()) as {
      authorization_endpoint: string;
    };
    const authorization = page.waitForRequest((request) =>
      request.url().startsWith(discovery.authorization_endpoint),
    );
    await page.goto(`${consoleUrl}#/templates`);
    const asked = new URL((await authorization).url());
    assert.equal(asked.searchParams.get('code_challenge_method'), 'S256');
    assert.match(asked.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(asked.searchParams.get('client_id'), provider.clientId);
    assert.deepEqual(asked.searchParams.get('scope')?.split(' '), [...consoleScopes]);

    // oidc-provider's own login and consent pages, not the built-in provider's development page.
    await page.locator('input[name=login]').fill(person);
    await page.locator('input[name=password]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();

    const apiCall = page.waitForRequest(
      (request: Request) =>
        request.url().startsWith(`${host.url}/template/query-1.0`) && request.method() === 'POST',
    );
    await waitForConsole(browser);
    const request = await apiCall;
    const answer = await request.response();
    assert.equal(answer?.status(), 200, "the console's own call is answered");
    const token = (await request.allHeaders()).authorization?.replace(/^Bearer /, '') ?? '';
    const claims = decodeJwt(token);
    assert.equal(claims.iss, provider.issuer);
    assert.equal(claims.sub, person);
    assert.equal(claims.tenant, account);

    const direct = await fetch(`${host.url}/template/query-1.0`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(direct.status, 200, await direct.clone().text());

    const header = page.locator('header .account');
    await header.getByText(account, { exact: false }).waitFor();
    const shown = (await header.textContent())?.replace(/\s+/g, ' ').trim();
    assert.equal(shown, `Signed in as ${account}Sign out`, 'the account the API acts for');
    assert.ok(!shown.includes(person), "not the person's sub");
  });
});
