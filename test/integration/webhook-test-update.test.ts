import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { describe, it, vi } from 'vitest';
import { call, mintToken, useHostEnvironment } from '../support/host.ts';
import { newAccount, type TestAccount } from '../support/messages.ts';
import { useWebhookEndpoints } from '../support/webhook-endpoints.ts';
import { verifiesByHand } from '../support/webhook-receiver.ts';

/**
 * POST /webhook/test-1.0 and POST /webhook/update-1.0 (docs/webhooks.md, "Test events" and
 * "Changing an endpoint") through the local host, with a real receiver on loopback that checks
 * every body against `WebhookEvent` in docs/openapi.json.
 */
useHostEnvironment();
const endpoints = useWebhookEndpoints('test');
const addHook = (who: TestAccount, events?: string[]) =>
  endpoints.add(who, events === undefined ? {} : { events });

async function attemptsOf(who: TestAccount, webhookId: string, eventId: string) {
  return vi.waitFor(
    async () => {
      const response = await call('POST', '/webhook/query-1.0', {
        token: who.token,
        body: { webhook_id: webhookId },
      });
      const mine = response.body.data.webhook.deliveries.filter(
        (attempt: { event_id: string }) => attempt.event_id === eventId,
      );
      assert.ok(mine.length > 0, response.text.slice(0, 600));
      return mine;
    },
    { timeout: 60_000, interval: 200 },
  );
}

describe('POST /webhook/test-1.0', () => {
  it('sends a signed sample of each asked type through the delivery path and records the attempt', async () => {
    const who = await newAccount('whtest');
    // Subscribed to bounces only: a test is sent whatever the endpoint subscribes to.
    const hook = await addHook(who, ['message.bounced']);
    for (const type of ['message.delivered', 'message.cancelled', 'inbound.received', 'webhook.disabled']) {
      const response = await call('POST', '/webhook/test-1.0', {
        token: who.token,
        body: { webhook_id: hook.id, type },
      });
      assert.equal(response.status, 200, response.text);
      const { event_id: eventId, ...rest } = response.body.data;
      assert.match(eventId, /^evt_[0-9a-f]{32}$/);
      assert.deepEqual(rest, { webhook_id: hook.id, type, queued: true });
      const [request] = await endpoints.receiver.waitFor((all) =>
        all.some((r) => r.headers['webhook-id'] === eventId),
      );
      const received = endpoints.receiver.received.find((r) => r.headers['webhook-id'] === eventId);
      assert.ok(received !== undefined && request !== undefined);
      assert.equal(received.path, hook.path);
      assert.doesNotThrow(() =>
        new Webhook(hook.secret).verify(received.body, received.headers as Record<string, string>),
      );
      assert.ok(verifiesByHand(hook.secret, received), 'the plain HMAC check fails');
      const body = JSON.parse(received.body);
      assert.equal(body.type, type);
      if (type.startsWith('message.')) {
        assert.equal(body.data.message_uuid, '00000000-0000-0000-0000-000000000000');
        assert.deepEqual(body.data.metadata, { test: 'true' });
      }
      const [attempt] = await attemptsOf(who, hook.id, eventId);
      assert.equal(attempt.type, type);
      assert.equal(attempt.status_code, 200);
      assert.equal(attempt.error, null);
    }
  });

  it('refuses an unknown type (107), a foreign webhook (112) and a read-only token (113)', async () => {
    const who = await newAccount('whtest');
    const other = await newAccount('whtest');
    const hook = await addHook(who);
    const badType = await call('POST', '/webhook/test-1.0', {
      token: who.token,
      body: { webhook_id: hook.id, type: 'message.read' },
    });
    assert.equal(badType.body.error.code, 107, badType.text);
    assert.ok(
      badType.body.error.details.some((detail: { field: string }) => detail.field === 'type'),
      badType.text,
    );
    const foreign = await call('POST', '/webhook/test-1.0', {
      token: other.token,
      body: { webhook_id: hook.id, type: 'message.delivered' },
    });
    assert.equal(foreign.body.error.code, 112, foreign.text);
    const readOnly = await mintToken({ account: who.account, scopes: ['webhooks:read'] });
    const denied = await call('POST', '/webhook/test-1.0', {
      token: readOnly,
      body: { webhook_id: hook.id, type: 'message.delivered' },
    });
    assert.equal(denied.body.error.code, 113, denied.text);
  });
});

describe('POST /webhook/update-1.0', () => {
  it('changes the URL and events and keeps the secret: the next event is signed with it at the new URL', async () => {
    const who = await newAccount('whupd');
    const hook = await addHook(who);
    const newPath = `${hook.path}-moved`;
    const response = await call('POST', '/webhook/update-1.0', {
      token: who.token,
      body: {
        webhook_id: hook.id,
        url: `${endpoints.receiver.url}${newPath}`,
        events: ['message.bounced', 'message.delivered'],
      },
    });
    assert.equal(response.status, 200, response.text);
    const webhook = response.body.data.webhook;
    assert.equal(webhook.url, `${endpoints.receiver.url}${newPath}`);
    assert.deepEqual(webhook.events, ['message.bounced', 'message.delivered']);
    assert.equal(webhook.secret, undefined, 'the secret is never shown again');
    const listed = await call('POST', '/webhook/query-1.0', {
      token: who.token,
      body: { webhook_id: hook.id },
    });
    assert.equal(listed.body.data.webhook.url, `${endpoints.receiver.url}${newPath}`);

    const test = await call('POST', '/webhook/test-1.0', {
      token: who.token,
      body: { webhook_id: hook.id, type: 'message.bounced' },
    });
    const eventId = test.body.data.event_id;
    await endpoints.receiver.waitFor((all) => all.some((r) => r.headers['webhook-id'] === eventId));
    const received = endpoints.receiver.received.find((r) => r.headers['webhook-id'] === eventId);
    assert.equal(received?.path, newPath);
    assert.ok(
      received !== undefined && verifiesByHand(hook.secret, received),
      'signed with the secret of the add',
    );

    // Only the events: the URL stays.
    const eventsOnly = await call('POST', '/webhook/update-1.0', {
      token: who.token,
      body: { webhook_id: hook.id, events: ['message.sent'] },
    });
    assert.equal(eventsOnly.status, 200, eventsOnly.text);
    assert.equal(eventsOnly.body.data.webhook.url, `${endpoints.receiver.url}${newPath}`);
    assert.deepEqual(eventsOnly.body.data.webhook.events, ['message.sent']);
  });

  it('refuses nothing to change, a bad URL, duplicate events (107) and a foreign webhook (112)', async () => {
    const who = await newAccount('whupd');
    const other = await newAccount('whupd');
    const hook = await addHook(who);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ webhook_id: hook.id }, 'url'],
      [{ webhook_id: hook.id, url: 'ftp://example.com/' }, 'url'],
      [{ webhook_id: hook.id, events: ['message.sent', 'message.sent'] }, 'events'],
      [{ webhook_id: hook.id, events: ['message.read'] }, 'events[0]'],
      [{ webhook_id: hook.id, url: `${endpoints.receiver.url}/x`, secret: 'whsec_x' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const response = await call('POST', '/webhook/update-1.0', { token: who.token, body });
      assert.equal(response.body.error?.code, 107, `${JSON.stringify(body)}: ${response.text}`);
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field === field),
        `${JSON.stringify(body)}: ${response.text}`,
      );
    }
    const foreign = await call('POST', '/webhook/update-1.0', {
      token: other.token,
      body: { webhook_id: hook.id, events: ['message.sent'] },
    });
    assert.equal(foreign.body.error.code, 112, foreign.text);
  });
});
