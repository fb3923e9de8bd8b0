import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { describe, it, vi } from 'vitest';
import { dynamo } from '../../shared/platform/aws/dynamo.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { webhookKeys } from '../../shared/webhooks/store/webhooks.ts';
import { addMessage, waitForStatus } from '../support/delivery.ts';
import { call, mintToken, useHostEnvironment } from '../support/host.ts';
import { isoWithOffset, newAccount, type TestAccount, textMessage } from '../support/messages.ts';
import { serviceLogFromNow } from '../support/service-log.ts';
import { type Hook, useWebhookEndpoints } from '../support/webhook-endpoints.ts';
import { type ReceivedWebhook, verifiesByHand } from '../support/webhook-receiver.ts';

/**
 * Webhooks end to end through the local host (docs/webhooks.md): the API, the table stream poller,
 * the fan-out and delivery functions, a real HTTP receiver on loopback (which checks every body
 * against `WebhookEvent` in docs/openapi.json). The test host retries after 1 s, 1 s, 1 s
 * (WEBHOOK_RETRY_SCHEDULE), so 4 attempts in all.
 */
const info = useHostEnvironment();
const endpoints = useWebhookEndpoints('hook');

/** Adds an endpoint, and checks the secret it is given: `whsec_` and 32 random bytes in base64. */
async function addHook(who: TestAccount, body: Record<string, unknown> = {}): Promise<Hook> {
  const hook = await endpoints.add(who, body);
  assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(hook.secret.slice(6), 'base64').length, 32);
  return hook;
}
const json = (request: ReceivedWebhook) => JSON.parse(request.body);

/** Checks a request the way a receiver must: the library verifier and the specification by hand. */
function assertSigned(hook: Hook, request: ReceivedWebhook): void {
  assert.equal(request.headers['content-type'], 'application/json');
  assert.match(String(request.headers['webhook-id']), /^evt_[0-9a-f]{32}$/);
  assert.match(String(request.headers['webhook-timestamp']), /^\d{10}$/);
  assert.doesNotThrow(() =>
    new Webhook(hook.secret).verify(request.body, request.headers as Record<string, string>),
  );
  assert.ok(verifiesByHand(hook.secret, request), 'the plain HMAC check fails');
}

/** The endpoint as the API lists it, once it lists `atLeast` attempts (and `until` holds). */
async function attemptsOf(
  who: TestAccount,
  hook: Hook,
  atLeast: number,
  until: (webhook: Record<string, any>) => boolean = () => true,
) {
  return vi.waitFor(
    async () => {
      const response = await call('POST', '/webhook/query-1.0', {
        token: who.token,
        body: { webhook_id: hook.id },
      });
      assert.equal(response.status, 200, response.text);
      const webhook = response.body.data.webhook;
      assert.ok(
        webhook.deliveries.length >= atLeast && until(webhook),
        JSON.stringify(webhook).slice(0, 800),
      );
      return webhook;
    },
    { timeout: 60_000, interval: 200 },
  );
}

describe('webhook events from message changes', () => {
  it('a delivered message: message.sent and message.delivered, each verifiable two ways', async () => {
    const who = await newAccount('wh');
    const hook = await addHook(who);
    const { uuid } = await addMessage(
      who.token,
      textMessage(who, { to: ['ok@recipient.test'], subject: 'Order 7' }),
    );
    const requests = await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 2);
    const mine = requests.filter((request) => request.path === hook.path);
    assert.deepEqual(mine.map((request) => json(request).type).sort(), ['message.delivered', 'message.sent']);
    for (const request of mine) {
      assertSigned(hook, request);
      const body = json(request);
      assert.deepEqual(Object.keys(body), ['type', 'timestamp', 'data']);
      assert.match(body.timestamp, isoWithOffset);
      assert.equal(body.data.message_uuid, uuid);
      assert.equal(body.data.subject, 'Order 7');
      assert.equal(body.data.recipient.email, 'ok@recipient.test');
      assert.equal(body.data.recipient.status, body.type.slice('message.'.length));
    }
    assert.notEqual(mine[0]?.headers['webhook-id'], mine[1]?.headers['webhook-id']);
    const webhook = await attemptsOf(who, hook, 2);
    assert.deepEqual(
      webhook.deliveries.map((attempt: Record<string, unknown>) => [
        attempt.attempt,
        attempt.status_code,
        attempt.error,
      ]),
      [
        [1, 200, null],
        [1, 200, null],
      ],
    );
  });

  it('a bounce: message.bounced with the SMTP reply; a hook gets only the types it asked for', async () => {
    const who = await newAccount('wh');
    const hook = await addHook(who, { events: ['message.bounced'] });
    // A hook for every event of the account: each change of the message is then fanned out (one job
    // per event for it), and the fan-out's log line counts the jobs, so the other hook's are known.
    await addHook(who);
    const log = serviceLogFromNow();
    const { uuid } = await addMessage(
      who.token,
      textMessage(who, { to: ['ok@recipient.test', 'bounce-1@recipient.test'] }),
    );
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 1);
    await waitForStatus(who.token, uuid, ['bounced']);
    const fannedOut = (lines: Record<string, any>[]) =>
      lines.filter((line) => line.message === 'webhook events fanned out' && line.message_uuid === uuid);
    const lines = await log.waitFor('the message’s sent, delivered and bounced events fanned out', (all) => {
      const types = fannedOut(all).flatMap((line) => line.events as string[]);
      return ['message.sent', 'message.delivered', 'message.bounced'].every((type) => types.includes(type));
    });
    for (const line of fannedOut(lines)) {
      const bounces = (line.events as string[]).filter((type) => type === 'message.bounced').length;
      assert.equal(
        line.jobs,
        line.events.length + bounces,
        `a job for the bounce only: ${JSON.stringify(line)}`,
      );
    }
    const mine = endpoints.on(hook);
    assert.equal(mine.length, 1, 'only the bounce');
    const body = json(mine[0] as ReceivedWebhook);
    assertSigned(hook, mine[0] as ReceivedWebhook);
    assert.equal(body.type, 'message.bounced');
    assert.equal(body.data.status, 'bounced');
    assert.equal(body.data.recipient.email, 'bounce-1@recipient.test');
    assert.match(body.data.recipient.detail, /550 5\.1\.1/);
  });

  it('a cancel: one message.cancelled with no recipient', async () => {
    const who = await newAccount('wh');
    const hook = await addHook(who);
    const { uuid } = await addMessage(who.token, textMessage(who, { scheduling: { mode: 'manual-wait' } }));
    const cancel = await call('POST', '/message/add-1.0', {
      token: who.token,
      body: { scheduling: { mode: 'manual-cancel', message_uuid: uuid } },
    });
    assert.equal(cancel.status, 200, cancel.text);
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 1);
    const [request] = endpoints.on(hook);
    assertSigned(hook, request as ReceivedWebhook);
    const body = json(request as ReceivedWebhook);
    assert.equal(body.type, 'message.cancelled');
    assert.deepEqual(body.data, {
      message_uuid: uuid,
      status: 'cancelled',
      recipient: null,
      subject: 'Hello',
      tags: [],
      metadata: {},
      stream: 'transactional',
    });
  });
});

describe('suppressed recipients', () => {
  it('a recipient on the suppression list: message.suppressed, nothing sent', async () => {
    const who = await newAccount('wh');
    const hook = await addHook(who);
    const suppressed = await call('POST', '/suppression/add-1.0', {
      token: who.token,
      body: { emails: ['blocked@recipient.test'] },
    });
    assert.equal(suppressed.status, 200, suppressed.text);
    const { uuid } = await addMessage(who.token, textMessage(who, { to: ['blocked@recipient.test'] }));
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 1);
    const [request] = endpoints.on(hook) as [ReceivedWebhook];
    assertSigned(hook, request);
    const body = json(request);
    assert.equal(body.type, 'message.suppressed');
    assert.equal(body.data.message_uuid, uuid);
    assert.equal(body.data.recipient.email, 'blocked@recipient.test');
    assert.equal(body.data.recipient.status, 'suppressed');
  });
});

describe('delivery', () => {
  it('a receiver answering 500 twice gets the same webhook-id three times; the attempts are listed', async () => {
    const who = await newAccount('wh');
    const hook = await addHook(who, { events: ['message.delivered'] });
    const previous = endpoints.receiver.respond;
    endpoints.receiver.respond = (request, seen) =>
      request.path === hook.path && seen < 2 ? 500 : previous(request, seen);
    await addMessage(who.token, textMessage(who, { to: ['ok@recipient.test'] }));
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 3);
    const ids = new Set(endpoints.on(hook).map((request) => request.headers['webhook-id']));
    assert.equal(ids.size, 1);
    for (const request of endpoints.on(hook)) assertSigned(hook, request);
    const webhook = await attemptsOf(who, hook, 3);
    const attempts = [...webhook.deliveries].reverse();
    assert.deepEqual(
      attempts.map((attempt: Record<string, unknown>) => [
        attempt.attempt,
        attempt.status_code,
        attempt.event_id,
      ]),
      [
        [1, 500, [...ids][0]],
        [2, 500, [...ids][0]],
        [3, 200, [...ids][0]],
      ],
    );
    assert.match(attempts[0].error, /500/);
    assert.match(attempts[0].next_attempt_at, isoWithOffset);
    assert.equal(attempts[2].next_attempt_at, null);
    assert.equal(attempts[2].type, 'message.delivered');
  });

  it('410 disables the endpoint', async () => {
    const who = await newAccount('wh');
    const hook = await addHook(who, { events: ['message.delivered'] });
    const previous = endpoints.receiver.respond;
    endpoints.receiver.respond = (request, seen) =>
      request.path === hook.path ? 410 : previous(request, seen);
    await addMessage(who.token, textMessage(who, { to: ['ok@recipient.test'] }));
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 1);
    const webhook = await attemptsOf(who, hook, 1, (current) => !current.enabled);
    assert.equal(webhook.enabled, false);
    assert.equal(webhook.deliveries[0].status_code, 410);
    assert.equal(webhook.deliveries[0].next_attempt_at, null);
    // A disabled endpoint receives nothing more: the next delivery is fanned out to a hook added now,
    // and to no other (the fan-out's log line counts one job).
    const witness = await addHook(who, { events: ['message.delivered'] });
    const log = serviceLogFromNow();
    const next = await addMessage(who.token, textMessage(who, { to: ['ok@recipient.test'] }));
    await endpoints.receiver.waitFor(() =>
      endpoints.on(witness).some((request) => json(request).data.message_uuid === next.uuid),
    );
    const fannedOut = (lines: Record<string, any>[]) =>
      lines.find(
        (line) =>
          line.message === 'webhook events fanned out' &&
          line.message_uuid === next.uuid &&
          line.events.includes('message.delivered'),
      );
    const line = fannedOut(
      await log.waitFor('the next delivery fanned out', (all) => fannedOut(all) !== undefined),
    );
    assert.equal(line?.jobs, 1, JSON.stringify(line));
    assert.equal(endpoints.on(hook).length, 1);
  });

  it('after a rotation every delivery carries two signatures and both secrets verify', async () => {
    const who = await newAccount('wh');
    const hook = await addHook(who, { events: ['message.delivered'] });
    const rotated = await call('POST', '/webhook/rotate-secret-1.0', {
      token: who.token,
      body: { webhook_id: hook.id },
    });
    assert.equal(rotated.status, 200, rotated.text);
    const fresh = rotated.body.data.webhook.secret as string;
    assert.notEqual(fresh, hook.secret);
    await addMessage(who.token, textMessage(who, { to: ['ok@recipient.test'] }));
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 1);
    const [request] = endpoints.on(hook) as [ReceivedWebhook];
    assert.equal(String(request.headers['webhook-signature']).split(' ').length, 2);
    assertSigned(hook, request);
    assertSigned({ ...hook, secret: fresh }, request);
    // The secret is never shown again, never stored in the clear, never logged.
    const listed = await call('POST', '/webhook/query-1.0', { token: who.token, body: {} });
    assert.ok(!listed.text.includes('whsec_'));
    const stored = await dynamo().send(
      new GetCommand({ TableName: tableName(), Key: webhookKeys.endpoint(who.account, hook.id) }),
    );
    const raw = JSON.stringify(stored.Item);
    assert.match(String(stored.Item?.secret_ciphertext), /^[A-Za-z0-9+/]+=*$/);
    assert.ok(stored.Item?.previous_secret_ciphertext !== undefined);
    for (const secret of [hook.secret, fresh]) {
      assert.ok(!raw.includes(secret.slice(6)), 'a secret is stored in the clear');
      if (info.logFile !== undefined)
        assert.ok(!readFileSync(info.logFile, 'utf8').includes(secret.slice(6)));
    }
  });

  it('a receiver down for the whole retry schedule: the job ends in the DLQ and the event is replayable', async () => {
    const who = await newAccount('wh');
    const hook = await addHook(who, { events: ['message.delivered'] });
    let down = true;
    const previous = endpoints.receiver.respond;
    endpoints.receiver.respond = (request, seen) =>
      request.path === hook.path ? (down ? 503 : 200) : previous(request, seen);
    await addMessage(who.token, textMessage(who, { to: ['ok@recipient.test'] }));
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 4);
    const webhook = await attemptsOf(who, hook, 4);
    assert.deepEqual(
      webhook.deliveries.map((attempt: Record<string, unknown>) => attempt.attempt),
      [4, 3, 2, 1],
    );
    assert.equal(webhook.deliveries[0].next_attempt_at, null);
    const eventId = webhook.deliveries[0].event_id as string;

    const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
    const deadline = Date.now() + 30_000;
    let found: Record<string, unknown> | undefined;
    while (found === undefined && Date.now() < deadline) {
      const batch = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: info.env.WEBHOOK_DEAD_LETTER_QUEUE_URL,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          WaitTimeSeconds: 1,
        }),
      );
      found = (batch.Messages ?? [])
        .map((message) => JSON.parse(message.Body ?? '{}') as Record<string, unknown>)
        .find((job) => job.webhook_id === hook.id);
    }
    sqs.destroy();
    assert.ok(found, 'the job is in the webhook DLQ');
    assert.equal(found.event_id, eventId);
    assert.equal(found.attempt, 4);

    down = false;
    const replay = await call('POST', '/webhook/replay-1.0', {
      token: who.token,
      body: { webhook_id: hook.id, event_id: eventId },
    });
    assert.equal(replay.status, 200, replay.text);
    assert.deepEqual(replay.body.data, { webhook_id: hook.id, event_id: eventId, queued: true });
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 5);
    const last = endpoints.on(hook).at(-1) as ReceivedWebhook;
    assert.equal(last.headers['webhook-id'], eventId);
    assert.equal(last.body, (endpoints.on(hook)[0] as ReceivedWebhook).body);
    assertSigned(hook, last);
  });
});

describe('endpoint management', () => {
  it('another account cannot see, delete, rotate or replay the endpoint (112)', async () => {
    const owner = await newAccount('wh');
    const other = await newAccount('wh');
    const hook = await addHook(owner, { events: ['message.delivered'] });
    await addMessage(owner.token, textMessage(owner, { to: ['ok@recipient.test'] }));
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 1);
    const eventId = String(endpoints.on(hook)[0]?.headers['webhook-id']);

    const listed = await call('POST', '/webhook/query-1.0', { token: other.token, body: {} });
    assert.deepEqual(listed.body.data, { webhooks: [], count: 0 });
    for (const [path, body] of [
      ['/webhook/query-1.0', { webhook_id: hook.id }],
      ['/webhook/delete-1.0', { webhook_id: hook.id }],
      ['/webhook/rotate-secret-1.0', { webhook_id: hook.id }],
      ['/webhook/replay-1.0', { webhook_id: hook.id, event_id: eventId }],
    ] as const) {
      const response = await call('POST', path, { token: other.token, body });
      assert.equal(response.status, 404, `${path}: ${response.text}`);
      assert.equal(response.body.error.code, 112);
    }
    // Nor replay the owner's event to an endpoint of its own.
    const own = await addHook(other);
    const foreignEvent = await call('POST', '/webhook/replay-1.0', {
      token: other.token,
      body: { webhook_id: own.id, event_id: eventId },
    });
    assert.equal(foreignEvent.body.error?.code, 112);

    const mine = await call('POST', '/webhook/query-1.0', { token: owner.token, body: {} });
    assert.equal(mine.body.data.count, 1);
    assert.equal(mine.body.data.webhooks[0].webhook_id, hook.id);
    const deleted = await call('POST', '/webhook/delete-1.0', {
      token: owner.token,
      body: { webhook_id: hook.id },
    });
    assert.deepEqual(deleted.body.data, { webhook_id: hook.id, deleted: true });
    const again = await call('POST', '/webhook/delete-1.0', {
      token: owner.token,
      body: { webhook_id: hook.id },
    });
    assert.equal(again.body.error.code, 112);
  });

  it('at most 10 endpoints per account', async () => {
    const who = await newAccount('wh');
    const hooks: Hook[] = [];
    for (let index = 0; index < 10; index++) hooks.push(await addHook(who));
    const eleventh = await call('POST', '/webhook/add-1.0', {
      token: who.token,
      body: { url: `${endpoints.receiver.url}/x` },
    });
    assert.equal(eleventh.status, 406);
    assert.equal(eleventh.body.error.code, 111);
    await call('POST', '/webhook/delete-1.0', { token: who.token, body: { webhook_id: hooks[0]?.id } });
    const replaced = await call('POST', '/webhook/add-1.0', {
      token: who.token,
      body: { url: `${endpoints.receiver.url}/y` },
    });
    assert.equal(replaced.status, 200, replaced.text);
  });

  it('bad input is a catalogue error with details; scopes are enforced', async () => {
    const who = await newAccount('wh');
    const cases: Array<[unknown, string]> = [
      // Strict input: the unknown field is named in its detail.
      [{ url: `${endpoints.receiver.url}/a`, event: ['message.sent'] }, 'event'],
      [{ url: 'ftp://example.com/' }, 'url'],
      [{ url: `${endpoints.receiver.url}/a`, events: ['message.read'] }, 'events[0]'],
      [{ url: `${endpoints.receiver.url}/a`, events: [] }, 'events'],
    ];
    for (const [body, field] of cases) {
      const response = await call('POST', '/webhook/add-1.0', { token: who.token, body });
      assert.equal(response.status, 406, JSON.stringify(body));
      assert.equal(response.body.error.code, 107);
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field === field),
        `${JSON.stringify(body)}: ${response.text}`,
      );
    }
    const badId = await call('POST', '/webhook/query-1.0', {
      token: who.token,
      body: { webhook_id: 'nope' },
    });
    assert.equal(badId.body.error.code, 107);
    const readOnly = await mintToken({ account: who.account, scopes: ['webhooks:read'] });
    const denied = await call('POST', '/webhook/add-1.0', {
      token: readOnly,
      body: { url: `${endpoints.receiver.url}/a` },
    });
    assert.equal(denied.body.error.code, 113);
    const allowed = await call('POST', '/webhook/query-1.0', { token: readOnly, body: {} });
    assert.equal(allowed.status, 200);
  });
});
