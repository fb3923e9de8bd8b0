import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { scopes as allScopes } from '../../shared/platform/auth/scopes.ts';
import { routes } from '../../shared/routes.ts';
import { makeKey } from '../support/apikeys.ts';
import { call, useHostEnvironment } from '../support/host.ts';
import { newAccount } from '../support/messages.ts';

useHostEnvironment();

/**
 * Walks the whole route table, so a route added later is covered without touching this test: a
 * key without a route's scope gets 113 on it, and a sending_access key reaches nothing but
 * message add and batch. The scope check comes before the body is read, so an empty body is
 * enough to tell "refused for its scope" from "let through".
 */
const protectedRoutes = routes.filter((route) => !route.public);
const sendingRoutes = new Set(['message-add', 'message-batch']);

function knock(route: (typeof routes)[number], token: string) {
  return call(route.method, route.path, route.method === 'POST' ? { token, body: {} } : { token });
}

describe('every route refuses an API key without its scope', () => {
  it('a key holding every scope but the route’s gets 113', async () => {
    const who = await newAccount('walk');
    const everyScope = Object.keys(allScopes);
    const keyFor = new Map<string, string>();
    for (const route of protectedRoutes) {
      if (route.scopes.length === 0) continue;
      const lacking = everyScope.filter((scope) => !(route.scopes as readonly string[]).includes(scope));
      const signature = lacking.join(' ');
      if (!keyFor.has(signature)) keyFor.set(signature, (await makeKey(who, { scopes: lacking })).key);
      const answer = await knock(route, keyFor.get(signature) as string);
      assert.equal(answer.status, 403, `${route.id}: ${answer.text}`);
      assert.equal(answer.body.error.code, 113, route.id);
    }
  });

  it('a sending_access key reaches nothing but message add and batch', async () => {
    const who = await newAccount('walk');
    const { key, api_key } = await makeKey(who, { preset: 'sending_access' });
    assert.deepEqual(api_key.scopes, ['messages:send']);
    for (const route of protectedRoutes) {
      const answer = await knock(route, key);
      const refused = answer.body?.error?.code === 113;
      if (sendingRoutes.has(route.id) || route.scopes.length === 0) {
        assert.equal(refused, false, `${route.id} must let a sending key through: ${answer.text}`);
      } else {
        assert.equal(refused, true, `${route.id} must refuse a sending key: ${answer.status} ${answer.text}`);
      }
    }
    // The only scope-free route is whoami, which only describes the credential.
    assert.deepEqual(
      protectedRoutes.filter((route) => route.scopes.length === 0).map((route) => route.id),
      ['whoami'],
    );
  });
});
