import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { Configuration } from 'oidc-provider';
import { scopes as serviceScopes } from '../../shared/platform/auth/scopes.ts';

/**
 * The local identity provider's development login page (`/interaction/<uid>`): where a real
 * provider asks for a password, this one asks which account to be and which scopes to grant, so
 * the console runs locally the same authorization-code flow it runs against Cognito, Auth0 or
 * Keycloak. It is plain HTML with one form and no script. Development only: anyone who can reach
 * the local provider can log in as any account, exactly as anyone can run `npm run admin -- token`.
 */

export interface DevLoginOptions {
  /** The API's resource indicator: the scopes chosen here are granted for it. */
  resource: string;
  /** Origins the form's redirect chain may end at (the console's), for the page's form-action. */
  consoleOrigins: () => readonly string[];
  /** Remembers the token lifetime chosen for a grant (the provider's AccessToken TTL reads it). */
  rememberLifetime: (grantId: string, seconds: number) => void;
}

export const defaultLifetimeSeconds = 3600;
const lifetimeChoices = [
  { seconds: 3600, label: '1 hour' },
  { seconds: 12 * 3600, label: '12 hours' },
  { seconds: 300, label: '5 minutes' },
  { seconds: 30, label: '30 seconds (to try an expiring session)' },
] as const;
const accountPattern = /^[A-Za-z0-9._@+-]{1,256}$/;

const style = `body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem}label{display:block}fieldset{border:1px solid #c9ced6;border-radius:6px;margin:1rem 0}
input[type=text]{font:inherit;padding:.3rem;width:100%;box-sizing:border-box}select{font:inherit;padding:.3rem}
.scope{display:flex;gap:.5rem;align-items:baseline}.scope small{color:#4a5360}
.note{background:#fff4d6;border:1px solid #e0c060;border-radius:6px;padding:.5rem .75rem}
.error{color:#a3141c;font-weight:600}button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}`;
const styleHash = createHash('sha256').update(style).digest('base64');

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (character) =>
      ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character] as string,
  );
}

function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 64 * 1024) {
        reject(new Error('form too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    request.on('error', reject);
  });
}

function page(response: ServerResponse, status: number, body: string, options: DevLoginOptions): void {
  const formAction = ["'self'", ...options.consoleOrigins()].join(' ');
  response.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; style-src 'sha256-${styleHash}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  response.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>svc-mail local identity provider: sign in</title><style>${style}</style></head>
<body><main>${body}</main></body></html>`);
}

function loginForm(
  uid: string,
  clientName: string,
  requested: readonly string[],
  account: string,
  error: string | undefined,
): string {
  const scopes = Object.entries(serviceScopes)
    .map(
      ([scope, description]) =>
        `<label class="scope"><input type="checkbox" name="scope" value="${escapeHtml(scope)}"${
          requested.includes(scope) ? ' checked' : ''
        }> <span><code>${escapeHtml(scope)}</code> <small>${escapeHtml(description)}</small></span></label>`,
    )
    .join('\n');
  const lifetimes = lifetimeChoices
    .map(
      ({ seconds, label }) =>
        `<option value="${seconds}"${seconds === defaultLifetimeSeconds ? ' selected' : ''}>${escapeHtml(label)}</option>`,
    )
    .join('');
  return `<h1>Sign in to ${escapeHtml(clientName)}</h1>
<p class="note">Local identity provider for development: choose the account to act as and the scopes to grant.
No password: anyone who can reach this machine's provider can do the same.</p>
${error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="/interaction/${escapeHtml(uid)}">
<label for="account">Account</label>
<input type="text" id="account" name="account" value="${escapeHtml(account)}" required autocomplete="username">
<fieldset><legend>Scopes</legend>
${scopes}
</fieldset>
<label for="lifetime">Session length</label>
<select id="lifetime" name="lifetime">${lifetimes}</select>
<p><button type="submit" name="action" value="sign-in">Sign in</button>
<button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></p>
</form>`;
}

type ProviderPage = { set(name: string, value: string): void; type: string; body: unknown };
type Logout = NonNullable<NonNullable<Configuration['features']>['rpInitiatedLogout']>;

/** One of the provider's own pages (error, sign-out), in the login page's style and policy. */
function providerPage(
  ctx: ProviderPage,
  consoleOrigins: readonly string[],
  title: string,
  body: string,
): void {
  ctx.type = 'html';
  ctx.set(
    'content-security-policy',
    `default-src 'none'; style-src 'sha256-${styleHash}'; form-action 'self' ${consoleOrigins.join(' ')}; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>svc-mail local identity provider: ${escapeHtml(title)}</title><style>${style}</style></head>
<body><main>${body}</main></body></html>`;
}

/**
 * The provider's error page (a bad authorization request, an unknown client) and its sign-out
 * pages, in place of oidc-provider's defaults (which load a web font from a third-party origin).
 */
export function providerPages(consoleOrigins: () => readonly string[]): {
  renderError: NonNullable<Configuration['renderError']>;
  logoutSource: NonNullable<Logout['logoutSource']>;
  postLogoutSuccessSource: NonNullable<Logout['postLogoutSuccessSource']>;
} {
  return {
    renderError: (ctx, out) => {
      const error = String(out.error ?? 'error');
      const description = out.error_description === undefined ? '' : String(out.error_description);
      providerPage(
        ctx,
        consoleOrigins(),
        'error',
        `<h1>Sign-in failed</h1><p class="error">${escapeHtml(error)}</p><p>${escapeHtml(description)}</p>`,
      );
    },
    logoutSource: (ctx, form) => {
      providerPage(
        ctx,
        consoleOrigins(),
        'sign out',
        `<h1>Sign out of the local identity provider?</h1>${form}
<p><button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button></p>`,
      );
    },
    postLogoutSuccessSource: (ctx) => {
      providerPage(ctx, consoleOrigins(), 'signed out', '<h1>Signed out</h1><p>You can close this page.</p>');
    },
  };
}

/** Answers GET and POST on `/interaction/<uid>`. */
export async function handleDevLogin(
  provider: Provider,
  request: IncomingMessage,
  response: ServerResponse,
  options: DevLoginOptions,
): Promise<void> {
  let details: Awaited<ReturnType<Provider['interactionDetails']>>;
  try {
    details = await provider.interactionDetails(request, response);
  } catch {
    request.resume();
    page(
      response,
      400,
      '<h1>This sign-in has expired</h1><p>Go back to the application and sign in again.</p>',
      options,
    );
    return;
  }
  const client = await provider.Client.find(String(details.params.client_id));
  const clientName = client?.clientName ?? String(details.params.client_id);
  const requested = String(details.params.scope ?? '').split(' ');
  const sessionAccount = details.session?.accountId;

  if (request.method === 'GET') {
    page(
      response,
      200,
      loginForm(details.uid, clientName, requested, sessionAccount ?? 'dev-account', undefined),
      options,
    );
    return;
  }
  if (request.method !== 'POST') {
    request.resume();
    response.writeHead(405, { allow: 'GET, POST' }).end();
    return;
  }
  const form = await readForm(request);
  if (form.get('action') === 'cancel') {
    await provider.interactionFinished(
      request,
      response,
      { error: 'access_denied', error_description: 'The user cancelled the sign-in' },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  const account = (form.get('account') ?? '').trim();
  const chosen = form.getAll('scope').filter((scope) => scope in serviceScopes);
  const lifetime = Number(form.get('lifetime'));
  const problem = !accountPattern.test(account)
    ? 'The account is 1 to 256 letters, digits or . _ @ + -'
    : chosen.length === 0
      ? 'Choose at least one scope'
      : !lifetimeChoices.some(({ seconds }) => seconds === lifetime)
        ? 'Choose a session length from the list'
        : undefined;
  if (problem !== undefined) {
    page(response, 400, loginForm(details.uid, clientName, chosen, account, problem), options);
    return;
  }

  // A new grant each time (the account or the choice may have changed): `openid` and the chosen
  // scopes for the API; the scopes left out are recorded as refused, so the provider does not ask
  // again for them on the next (silent) sign-in of this session.
  const grant = new provider.Grant({ accountId: account, clientId: String(details.params.client_id) });
  if (requested.includes('openid')) grant.addOIDCScope('openid');
  grant.addResourceScope(options.resource, chosen.join(' '));
  const refused = Object.keys(serviceScopes).filter((scope) => !chosen.includes(scope));
  if (refused.length > 0) grant.rejectResourceScope(options.resource, refused.join(' '));
  const grantId = await grant.save();
  options.rememberLifetime(grantId, lifetime);

  await provider.interactionFinished(
    request,
    response,
    { login: { accountId: account, remember: false }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}
