import assert from 'node:assert/strict';
import { afterAll, beforeAll } from 'vitest';
import { call } from './host.ts';
import { type ReceivedWebhook, startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

/** An endpoint added through the API, pointing at its own path on the test receiver. */
export interface Hook {
  id: string;
  secret: string;
  path: string;
  /** The add answer's `webhook`, as the API gave it. */
  webhook: Record<string, any>;
}

export interface WebhookEndpoints {
  /** The file's receiver on loopback (started before its tests, closed after them). */
  readonly receiver: WebhookReceiver;
  /** Adds an endpoint for `who` at a fresh path of the receiver; `body` adds fields (events, …). */
  add(who: { token: string; account: string }, body?: Record<string, unknown>): Promise<Hook>;
  /** What the receiver got on this endpoint's path, in order. */
  on(hook: Hook): ReceivedWebhook[];
}

/**
 * A webhook receiver for one test file, and endpoints added through the API that point at it: each
 * endpoint has a path of its own (`/<prefix>-<n>-<account>`), so the tests of a file tell their
 * deliveries apart.
 */
export function useWebhookEndpoints(prefix: string): WebhookEndpoints {
  let receiver: WebhookReceiver | undefined;
  let paths = 0;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const started = (): WebhookReceiver => {
    if (receiver === undefined) throw new Error('the webhook receiver starts in beforeAll');
    return receiver;
  };
  return {
    get receiver() {
      return started();
    },
    async add(who, body = {}) {
      paths += 1;
      const path = `/${prefix}-${paths}-${who.account}`;
      const response = await call('POST', '/webhook/add-1.0', {
        token: who.token,
        body: { url: `${started().url}${path}`, ...body },
      });
      assert.equal(response.status, 200, response.text);
      const webhook = response.body.data.webhook;
      return { id: webhook.webhook_id as string, secret: webhook.secret as string, path, webhook };
    },
    on: (hook) => started().received.filter((request) => request.path === hook.path),
  };
}
