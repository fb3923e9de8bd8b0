import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { sealWebhookSecret } from '../../shared/webhooks/secrets.ts';
import { createEndpoint } from '../../shared/webhooks/store/webhooks.ts';
import { call, mintToken } from '../support/host.ts';
import { type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * The target rule with the local switch off (WEBHOOK_ALLOW_PRIVATE_TARGETS=false), as on AWS: on a
 * secondary host, because the shared test host allows private targets (its receivers are local).
 */
let host: SecondaryHost;
let receiver: WebhookReceiver;
let token: string;
const account = 'ssrf-account';

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  host = await startSecondaryHost({
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false',
    WEBHOOK_RETRY_SCHEDULE: '1',
    SEED_DOMAINS: `ssrf.test=${account}`,
  });
  token = await mintToken({ account, signer: host });
  // This file's repositories reach the secondary host's stores (and its local wrapping key).
  for (const [name, value] of Object.entries(host.env)) process.env[name] = value;
});
afterAll(async () => {
  await host?.stop();
  await receiver?.close();
});

describe('targets resolving to private addresses are refused when the switch is off', () => {
  it('at add time: loopback, localhost, private, link-local and metadata addresses are 107 with a detail', async () => {
    const refused: Array<[string, RegExp]> = [
      [`http://127.0.0.1:${receiver.port}/a`, /loopback/],
      // A name's answer names no address and no range: what it resolves to is not the caller's to learn.
      [`http://localhost:${receiver.port}/a`, /^Target refused: localhost resolves to a non-public address$/],
      [`http://[::1]:${receiver.port}/a`, /loopback/],
      ['http://10.1.2.3/a', /private/],
      ['http://192.168.0.10/a', /private/],
      ['http://169.254.169.254/latest/meta-data/', /metadata/],
      ['http://[fe80::1]/a', /link-local/],
    ];
    for (const [url, reason] of refused) {
      const response = await call('POST', '/webhook/add-1.0', { baseUrl: host.url, token, body: { url } });
      assert.equal(response.status, 406, `${url}: ${response.text}`);
      assert.equal(response.body.error.code, 107);
      assert.equal(response.body.error.details[0].field, 'url');
      assert.match(response.body.error.details[0].message, reason, url);
    }
  });

  it('on every attempt: an endpoint whose name now resolves to loopback is refused, nothing is sent', async () => {
    // As if it had been added while its name resolved to a public address.
    const webhookId = 'wh_00000000000000000000ab12';
    const now = new Date().toISOString();
    await createEndpoint(
      {
        webhookId,
        accountId: account,
        url: `http://localhost:${receiver.port}/later-private`,
        events: ['message.delivered'],
        description: null,
        enabled: true,
        createdAt: now,
        updatedAt: now,
        secretCiphertext: await sealWebhookSecret(
          webhookId,
          `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
        ),
      },
      10,
    );
    const sent = await call('POST', '/message/add-1.0', {
      baseUrl: host.url,
      token,
      body: {
        message_sender: 'app@ssrf.test',
        to: ['ok@recipient.test'],
        subject: 'x',
        content: { kind: 'text_only', text: 'x' },
      },
    });
    assert.equal(sent.status, 200, sent.text);
    const deliveries: Array<Record<string, unknown>> = await vi.waitFor(
      async () => {
        const response = await call('POST', '/webhook/query-1.0', {
          baseUrl: host.url,
          token,
          body: { webhook_id: webhookId },
        });
        const listed = response.body.data.webhook.deliveries;
        assert.ok(listed.length >= 2, `attempts so far: ${JSON.stringify(listed)}`);
        return listed;
      },
      { timeout: 60_000, interval: 300 },
    );
    assert.equal(deliveries.length, 2, 'both attempts (WEBHOOK_RETRY_SCHEDULE=1) recorded');
    for (const attempt of deliveries) {
      assert.equal(attempt.status_code, null);
      assert.equal(attempt.error, 'Target refused: localhost resolves to a non-public address');
    }
    assert.equal(receiver.received.filter((request) => request.path === '/later-private').length, 0);
  });
});
