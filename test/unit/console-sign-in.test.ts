import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { accountOf } from '../../console/src/account.ts';
import { consoleScopes } from '../../console/src/config-contract.ts';
import { consoleSignIn } from '../../infra/local/console-identity.ts';
import { routes } from '../../shared/routes.ts';

const root = join(import.meta.dirname, '..', '..');

function jwt(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'ES256', typ: 'at+jwt' })}.${part(payload)}.c2lnbmF0dXJl`;
}

describe('the local console signs in with the configured issuer', () => {
  it('uses AUTH_ISSUER with CONSOLE_CLIENT_ID and AUTH_ACCOUNT_CLAIM when set', () => {
    assert.deepEqual(
      consoleSignIn(
        {
          AUTH_ISSUER: 'https://id.example.com/realms/mail',
          CONSOLE_CLIENT_ID: 'mail-console',
          AUTH_ACCOUNT_CLAIM: 'custom:tenant',
        },
        'http://127.0.0.1:3001',
      ),
      {
        issuer: 'https://id.example.com/realms/mail',
        clientId: 'mail-console',
        accountClaim: 'custom:tenant',
        builtIn: false,
      },
    );
  });

  it('uses the built-in provider only when no issuer is configured (an empty one counts as none)', () => {
    for (const environment of [{}, { AUTH_ISSUER: '' }, { AUTH_ISSUER: ' ', CONSOLE_CLIENT_ID: '' }]) {
      assert.deepEqual(consoleSignIn(environment, 'http://127.0.0.1:3001'), {
        issuer: 'http://127.0.0.1:3001',
        clientId: 'svc-mail-console',
        accountClaim: 'sub',
        builtIn: true,
      });
    }
  });
});

describe("the console's signed in as", () => {
  it("names the access token's account claim, not the ID token's sub", () => {
    const token = jwt({ sub: 'ada', tenant: 'acme-7', 'custom:tenant': 'ünï-çødé' });
    assert.equal(accountOf(token, { sub: 'ada' }, 'tenant'), 'acme-7');
    assert.equal(accountOf(token, { sub: 'ada' }, 'custom:tenant'), 'ünï-çødé');
    assert.equal(accountOf(token, { sub: 'ada' }, 'sub'), 'ada');
  });

  it("falls back to the ID token's claim for an opaque access token, else names none", () => {
    assert.equal(accountOf('opaque-token', { sub: 'ada', tenant: 'acme-7' }, 'tenant'), 'acme-7');
    assert.equal(accountOf('opaque-token', { sub: 'ada' }, 'tenant'), undefined);
    assert.equal(accountOf(jwt({ sub: 'ada', tenant: 7 }), { sub: 'ada' }, 'tenant'), undefined);
    assert.equal(accountOf('a.!!!.c', undefined, 'sub'), undefined);
  });
});

describe('docs/deploy.md lists every scope the console requests', () => {
  it('names exactly consoleScopes in its scopes item', () => {
    const deploy = readFileSync(join(root, 'docs', 'deploy.md'), 'utf8');
    const section = deploy.slice(deploy.indexOf('### Open the web console'));
    const item = section.slice(
      section.indexOf('- scopes:'),
      section.indexOf('\n- ', section.indexOf('- scopes:') + 1),
    );
    const listed = [...item.matchAll(/`(openid|[a-z_]+:[a-z_]+)`/g)].map((match) => match[1]);
    assert.deepEqual([...listed].sort(), [...consoleScopes].sort());
  });
});

describe("the console's scopes are those of the API calls in its source", () => {
  const sources = readdirSync(join(root, 'console', 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file))
    .map((file) => readFileSync(join(root, 'console', 'src', file), 'utf8'));
  const calls = [
    ...new Set(
      sources.flatMap((source) =>
        [...source.matchAll(/\.(GET|POST)\(\s*'(\/[^']+)'/g)].map((m) => `${m[1]} ${m[2]}`),
      ),
    ),
  ];
  const needed = new Set(
    calls.flatMap((call) => {
      const found = routes.find((route) => `${route.method} ${route.path}` === call);
      assert.ok(found, `the console calls ${call}, which is a route`);
      return found.scopes;
    }),
  );

  it('requests every scope a call of the console needs, and none that no call needs', () => {
    assert.ok(calls.length > 10, `the console's calls are found: ${calls.join(', ')}`);
    assert.deepEqual([...needed].sort(), consoleScopes.filter((scope) => scope !== 'openid').sort());
  });
});
