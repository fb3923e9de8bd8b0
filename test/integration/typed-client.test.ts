import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { newAccount } from '../support/messages.ts';
import { typedClient } from '../support/typed-client.ts';

/**
 * The typed client generated from docs/openapi.json (openapi-typescript types + openapi-fetch),
 * used the way a customer would: add, query and delete a message, and read a typed error.
 */
describe('typed client (clients/svc-mail.ts)', () => {
  it('adds, queries and deletes a message with typed requests and answers', async () => {
    const who = await newAccount('typed');
    const api = typedClient(who.token);

    const added = await api.POST('/message/add-1.0', {
      params: { header: { 'Idempotency-Key': `typed-${who.account}` } },
      body: {
        message_sender: `Typed <${who.sender}>`,
        to: ['ada@recipient.test'],
        subject: 'Typed hello',
        content: { kind: 'text_only', text: 'Hi from the typed client' },
        scheduling: { mode: 'manual-wait' },
      },
    });
    assert.equal(added.response.status, 200);
    assert.ok(added.data, JSON.stringify(added.error));
    const uuid = added.data.data.message_uuid;
    assert.ok(uuid);
    assert.equal(added.data.data.status, 'waiting');

    const one = await api.POST('/message/query-1.0', { body: { message_uuid: uuid } });
    assert.ok(one.data, JSON.stringify(one.error));
    assert.ok('subject' in one.data.data, 'the full message');
    assert.equal(one.data.data.subject, 'Typed hello');
    assert.equal(one.data.data.status, 'waiting');

    const page = await api.POST('/message/query-1.0', {
      body: { filters: { status: 'waiting', limit: 10 } },
    });
    assert.ok(page.data && 'messages' in page.data.data, JSON.stringify(page.error));
    assert.deepEqual(
      page.data.data.messages.map((message) => message.message_uuid),
      [uuid],
    );

    const dryRun = await api.POST('/message/delete-1.0', {
      params: { query: { dry_run: true } },
      body: { message_uuids: [uuid] },
    });
    assert.deepEqual(dryRun.data?.data.deleted, [uuid]);
    assert.equal(dryRun.data?.data.dry_run, true);

    const deleted = await api.POST('/message/delete-1.0', { body: { message_uuids: [uuid] } });
    assert.deepEqual(deleted.data?.data, { deleted: [uuid], not_found: [], unauthorized: [], protected: [] });

    const gone = await api.POST('/message/query-1.0', { body: { message_uuid: uuid } });
    assert.equal(gone.response.status, 404);
    assert.equal(gone.error?.error.code, 112);
  });

  it('sends a batch with tags and metadata, and finds it with the search filters', async () => {
    const who = await newAccount('typed');
    const api = typedClient(who.token);
    const message = (order: string) => ({
      message_sender: who.sender,
      to: ['ada@recipient.test'],
      subject: `Receipt ${order}`,
      content: { kind: 'text_only' as const, text: `Order ${order}` },
      tags: [{ name: 'category', value: 'receipt' }],
      metadata: { order_id: order },
      scheduling: { mode: 'manual-wait' as const },
    });
    const sent = await api.POST('/message/batch-1.0', {
      params: { header: { 'Idempotency-Key': `typed-batch-${who.account}` } },
      body: { validation: 'permissive', messages: [message('1'), message('2')] },
    });
    assert.ok(sent.data, JSON.stringify(sent.error));
    assert.equal(sent.data.data.accepted, 2);
    const uuids = sent.data.data.results.map((result) =>
      'message_uuid' in result ? result.message_uuid : null,
    );

    const byTag = await api.POST('/message/query-1.0', {
      body: { filters: { tag: { name: 'category', value: 'receipt' }, status: 'waiting' } },
    });
    assert.ok(byTag.data && 'messages' in byTag.data.data, JSON.stringify(byTag.error));
    assert.deepEqual(byTag.data.data.messages.map((m) => m.message_uuid).sort(), [...uuids].sort());

    const byOrder = await api.POST('/message/query-1.0', {
      body: { filters: { metadata: { order_id: '2' }, recipient: 'ADA@recipient.test' } },
    });
    assert.ok(byOrder.data && 'messages' in byOrder.data.data);
    assert.deepEqual(
      byOrder.data.data.messages.map((m) => m.message_uuid),
      [uuids[1]],
    );
    const one = await api.POST('/message/query-1.0', { body: { message_uuid: uuids[1] as string } });
    assert.ok(one.data && 'tags' in one.data.data);
    assert.deepEqual(
      [one.data.data.tags, one.data.data.metadata],
      [[{ name: 'category', value: 'receipt' }], { order_id: '2' }],
    );
  });

  it('reads typed errors and public endpoints', async () => {
    const anonymous = typedClient();
    const health = await anonymous.GET('/health');
    assert.equal(health.data?.data.status, 'ok');

    const denied = await anonymous.GET('/domain/dkim/status-1.0', {
      params: { query: { domain: 'example.test' } },
    });
    assert.equal(denied.response.status, 401);
    assert.equal(denied.error?.error.code, 104);
  });

  it('asks for tracking and reads it back, typed', async () => {
    const who = await newAccount('typed-track');
    const api = typedClient(who.token);
    const added = await api.POST('/message/add-1.0', {
      body: {
        message_sender: who.sender,
        to: ['ada@recipient.test'],
        content: { kind: 'html_only', html: '<p><a href="https://shop.example/">Shop</a></p>' },
        tracking: { opens: true, clicks: false },
        scheduling: { mode: 'manual-wait' },
      },
    });
    assert.ok(added.data, JSON.stringify(added.error));
    const one = await api.POST('/message/query-1.0', {
      body: { message_uuid: added.data.data.message_uuid as string },
    });
    assert.ok(one.data && 'tracking' in one.data.data);
    assert.deepEqual(one.data.data.tracking, { opens: true, clicks: false });
  });
});
