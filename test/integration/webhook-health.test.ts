import assert from 'node:assert/strict';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { describe, it, vi } from 'vitest';
import { dynamo } from '../../shared/platform/aws/clients.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { failuresBeforePause } from '../../shared/webhooks/model/endpoint-health.ts';
import { enqueueDeliveries, webhookKeys } from '../../shared/webhooks/store/webhooks.ts';
import { call, useHostEnvironment } from '../support/host.ts';
import { newAccount, type TestAccount } from '../support/messages.ts';
import { type Hook, useWebhookEndpoints } from '../support/webhook-endpoints.ts';
import { jobsFor, storeTestEvents } from '../support/webhook-events.ts';
import type { ReceivedWebhook } from '../support/webhook-receiver.ts';

/**
 * Failing endpoints stop holding workers (docs/webhooks.md, "Failing endpoints"), through the host's
 * webhook queue and delivery function: after 5 failures in a row an endpoint's jobs wait (no attempt,
 * no retry used up) and one trial attempt after each pause decides; after 5 days of failures it is
 * disabled, its query says why, and the account's other endpoints get a `webhook.disabled` event.
 * The test host pauses for 2 s, then 4 s (WEBHOOK_PAUSE_SCHEDULE) and retries after 1 s, 1 s, 1 s.
 */
useHostEnvironment();
const endpoints = useWebhookEndpoints('health');

async function endpoint(who: TestAccount, hook: Hook) {
  const response = await call('POST', '/webhook/query-1.0', {
    token: who.token,
    body: { webhook_id: hook.id },
  });
  assert.equal(response.status, 200, response.text);
  return response.body.data.webhook;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await read();
      if (!done(value)) throw new Error(`condition not met: ${JSON.stringify(value).slice(0, 600)}`);
      return value;
    },
    { timeout: timeoutMs, interval: 150 },
  );
}

/** `count` stored events of the account, one delivery job each to every hook, on the host's queue. */
async function events(who: TestAccount, hooks: Hook[], count: number): Promise<string[]> {
  const ids = await storeTestEvents(who.account, count);
  await enqueueDeliveries(
    jobsFor(
      who.account,
      ids,
      hooks.map((hook) => hook.id),
    ),
  );
  return ids;
}

describe('failing endpoints', () => {
  it('five failures in a row pause the endpoint; trial attempts decide; nothing is lost, and it recovers', async () => {
    const who = await newAccount('whhealth');
    const hook = await endpoints.add(who);
    let failing = true;
    const previous = endpoints.receiver.respond;
    endpoints.receiver.respond = (request, seen) =>
      request.path === hook.path ? (failing ? 503 : 200) : previous(request, seen);
    // Ten events: without the pause they would use up their 4 attempts each (40 requests) and be
    // dead-lettered while the receiver fails.
    const ids = await events(who, [hook], 10);

    // Two pauses and two failed trials later…
    const paused = await until(
      () => endpoint(who, hook),
      (view) => view.health.consecutive_failures >= failuresBeforePause + 2 && view.health.state === 'paused',
    );
    assert.match(
      paused.note,
      /^Deliveries are paused until .+ after \d+ failed attempts in a row since .+; then one trial attempt decides whether they resume; without a successful delivery it is disabled at /,
    );
    assert.equal(paused.enabled, true);
    const requests = endpoints.on(hook).length;
    // Every request is a counted failure; a few more may have been in flight at the moment.
    assert.ok(requests >= paused.health.consecutive_failures, `${requests} requests`);
    assert.ok(
      requests <= paused.health.consecutive_failures + 4,
      `${requests} requests for ${paused.health.consecutive_failures} failures`,
    );
    assert.ok(requests < 20, 'far fewer than the 40 attempts the jobs would have made');

    failing = false;
    // The next trial succeeds and every waiting job follows: all ten events arrive, none was lost.
    await endpoints.receiver.waitFor(() => {
      const delivered = new Set(
        endpoints
          .on(hook)
          .filter((request) => request.at > 0)
          .map((request) => String(request.headers['webhook-id'])),
      );
      return ids.every((id) => delivered.has(id));
    });
    const healthy = await until(
      () => endpoint(who, hook),
      (view) => view.health.state === 'healthy',
    );
    assert.deepEqual(healthy.health, {
      state: 'healthy',
      consecutive_failures: 0,
      failing_since: null,
      paused_until: null,
    });
    assert.equal(healthy.note, null);
  });

  it('after 5 days of failures the endpoint is disabled, says why, and the other endpoints get webhook.disabled', async () => {
    const who = await newAccount('whhealth');
    const dying = await endpoints.add(who);
    const watching = await endpoints.add(who);
    const previous = endpoints.receiver.respond;
    endpoints.receiver.respond = (request, seen) =>
      request.path === dying.path ? 500 : previous(request, seen);
    // As if it had been failing for six days (hourly trials), and its pause were just over.
    const sixDaysAgo = new Date(Date.now() - 6 * 24 * 3600 * 1000).toISOString();
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: webhookKeys.endpoint(who.account, dying.id),
        UpdateExpression: 'SET consecutive_failures = :n, failing_since = :since',
        ExpressionAttributeValues: { ':n': 150, ':since': sixDaysAgo },
      }),
    );
    await events(who, [dying], 1);

    const disabled = await until(
      () => endpoint(who, dying),
      (view) => view.enabled === false,
    );
    assert.equal(disabled.health.state, 'disabled');
    assert.match(
      disabled.note,
      /^Disabled after failing for 5 days without a successful delivery \(151 failed attempts in a row since /,
    );

    // The other endpoint hears of it: a signed webhook.disabled event naming the endpoint and why.
    const [event] = (
      await endpoints.receiver.waitFor(() =>
        endpoints.on(watching).some((request) => JSON.parse(request.body).type === 'webhook.disabled'),
      )
    ).filter(
      (request) => request.path === watching.path && JSON.parse(request.body).type === 'webhook.disabled',
    ) as [ReceivedWebhook];
    assert.doesNotThrow(() =>
      new Webhook(watching.secret).verify(event.body, event.headers as Record<string, string>),
    );
    const body = JSON.parse(event.body);
    assert.equal(body.data.webhook_id, dying.id);
    assert.equal(body.data.url, `${endpoints.receiver.url}${dying.path}`);
    assert.match(body.data.reason, /^Disabled after failing for 5 days/);
    assert.match(body.timestamp, /[+-]\d{2}:\d{2}$/);
    assert.equal(
      endpoints.on(dying).filter((request) => JSON.parse(request.body).type === 'webhook.disabled').length,
      0,
    );

    // A disabled endpoint gets nothing more.
    const before = endpoints.on(dying).length;
    const [later] = await events(who, [dying, watching], 1);
    await endpoints.receiver.waitFor(() =>
      endpoints.on(watching).some((request) => request.headers['webhook-id'] === later),
    );
    assert.equal(endpoints.on(dying).length, before);
  });

  it('a 410 Gone also tells the other endpoints (webhook.disabled)', async () => {
    const who = await newAccount('whhealth');
    const gone = await endpoints.add(who);
    const watching = await endpoints.add(who);
    const previous = endpoints.receiver.respond;
    endpoints.receiver.respond = (request, seen) =>
      request.path === gone.path ? 410 : previous(request, seen);
    await events(who, [gone], 1);
    await endpoints.receiver.waitFor(() =>
      endpoints.on(watching).some((request) => JSON.parse(request.body).type === 'webhook.disabled'),
    );
    const view = await endpoint(who, gone);
    assert.equal(view.enabled, false);
    assert.equal(view.note, 'The receiver answered 410 Gone');
  });
});
