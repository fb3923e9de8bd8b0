import assert from 'node:assert/strict';
import { beforeAll, describe, it } from 'vitest';
import { call } from '../support/host.ts';
import {
  type InboundSummary,
  inboundDetails,
  receivingAccount,
  sendInbound,
  waitForInbound,
} from '../support/inbound.ts';
import type { TestAccount } from '../support/messages.ts';
import { typedClient } from '../support/typed-client.ts';

/**
 * Listing and deleting received mail (docs/inbound.md): pages newest first through the sharded
 * indexes, filters by recipient, sender and date, strict input, one item per receiving recipient
 * (and per account), and objects kept while another recipient's item still uses them.
 */
let who: TestAccount;
const list = (account: TestAccount, body: unknown) =>
  call<{ data: { inbound: InboundSummary[]; count: number; next_cursor: string | null } }>(
    'POST',
    '/inbound/query-1.0',
    { token: account.token, body },
  );

beforeAll(async () => {
  who = await receivingAccount('list');
  // Five messages, two senders, two recipients, sent one after the other.
  for (let index = 0; index < 5; index++) {
    const outcome = await sendInbound({
      from: index % 2 === 0 ? 'ada@even.test' : 'Bob <bob@odd.test>',
      to: index < 3 ? `first@${who.domain}` : `second@${who.domain}`,
      subject: `message ${index}`,
      text: `body ${index}`,
    });
    assert.ok(outcome.ok, outcome.response);
  }
  await waitForInbound(who, `first@${who.domain}`, 3);
  await waitForInbound(who, `second@${who.domain}`, 2);
});

describe('POST /inbound/query-1.0 with filters', () => {
  it('pages through everything newest first, each message once, with a cursor', async () => {
    const seen: InboundSummary[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const answer = await list(who, { filters: { limit: 2 }, ...(cursor === undefined ? {} : { cursor }) });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.data.count, answer.body.data.inbound.length);
      seen.push(...answer.body.data.inbound);
      if (answer.body.data.next_cursor === null) break;
      cursor = answer.body.data.next_cursor;
    }
    assert.deepEqual(
      seen.map((entry) => entry.subject),
      ['message 4', 'message 3', 'message 2', 'message 1', 'message 0'],
    );
    const times = seen.map((entry) => Date.parse(String(entry.received_at)));
    assert.deepEqual(
      [...times].sort((a, b) => b - a),
      times,
    );
  });

  it('filters by sender, by recipient, and by date; recipient and sender together are 107', async () => {
    const bob = await list(who, { filters: { sender: 'BOB@odd.test' } });
    assert.deepEqual(
      bob.body.data.inbound.map((entry) => entry.subject),
      ['message 3', 'message 1'],
    );
    const second = await list(who, { filters: { recipient: `second@${who.domain}` } });
    assert.deepEqual(
      second.body.data.inbound.map((entry) => entry.subject),
      ['message 4', 'message 3'],
    );
    const future = await list(who, { filters: { date_from: '2099-01-01T00:00:00+00:00' } });
    assert.deepEqual(future.body.data, { inbound: [], count: 0, next_cursor: null });
    const newest = (await list(who, { filters: { limit: 1 } })).body.data.inbound[0] as InboundSummary;
    const upTo = await list(who, {
      filters: { date_to: String(newest.received_at), sender: 'ada@even.test' },
    });
    assert.equal(upTo.body.data.inbound[0]?.subject, 'message 4', 'date_to is inclusive');

    const both = await call<{ error: { code: number; details: Array<{ field: string }> } }>(
      'POST',
      '/inbound/query-1.0',
      { token: who.token, body: { filters: { recipient: `first@${who.domain}`, sender: 'ada@even.test' } } },
    );
    assert.equal(both.body.error.code, 107);
    assert.equal(both.body.error.details[0]?.field, 'filters.sender');
    const badAddress = await call<{ error: { code: number } }>('POST', '/inbound/query-1.0', {
      token: who.token,
      body: { filters: { sender: 'not an address' } },
    });
    assert.equal(badAddress.body.error.code, 10000001);
    const unknownField = await call<{ error: { code: number; details: Array<{ field: string }> } }>(
      'POST',
      '/inbound/query-1.0',
      { token: who.token, body: { filters: { recipients: 'x@y.test' } } },
    );
    assert.equal(unknownField.body.error.code, 107);
    assert.match(JSON.stringify(unknownField.body.error.details), /recipients/);
  });

  it('works through the typed client', async () => {
    const api = typedClient(who.token);
    const page = await api.POST('/inbound/query-1.0', { body: { filters: { limit: 1 } } });
    assert.ok(page.data && 'inbound' in page.data.data, JSON.stringify(page.error));
    const first = page.data.data.inbound[0];
    assert.equal(first?.subject, 'message 4');
    const one = await api.POST('/inbound/query-1.0', {
      body: { inbound_uuid: first?.inbound_uuid as string },
    });
    assert.ok(one.data && 'text' in one.data.data, JSON.stringify(one.error));
    assert.equal(one.data.data.text?.trim(), 'body 4');
  });
});

describe('one received message for several recipients and accounts', () => {
  it('makes one item per receiving recipient, each account sees its own, and shared objects go with the last item', async () => {
    const other = await receivingAccount('list-other');
    const outcome = await sendInbound({
      from: 'ada@even.test',
      to: [`a@${who.domain}`, `b@${who.domain}`, `c@${other.domain}`],
      subject: 'to three',
      text: 'shared',
    });
    assert.ok(outcome.ok, outcome.response);
    const [a] = await waitForInbound(who, `a@${who.domain}`);
    const [b] = await waitForInbound(who, `b@${who.domain}`);
    const [c] = await waitForInbound(other, `c@${other.domain}`);
    assert.ok(a && b && c);
    assert.equal(new Set([a.inbound_uuid, b.inbound_uuid, c.inbound_uuid]).size, 3);
    // The other account cannot see this account's items, nor the reverse.
    const foreign = await call<{ error: { code: number } }>('POST', '/inbound/query-1.0', {
      token: other.token,
      body: { inbound_uuid: a.inbound_uuid },
    });
    assert.equal(foreign.body.error.code, 112);
    assert.ok(
      !(await list(other, { filters: {} })).body.data.inbound.some((entry) =>
        entry.recipient.endsWith(who.domain),
      ),
    );

    const rawUrl = (await inboundDetails(who, b.inbound_uuid)).raw_url;
    for (const entry of [a, c]) {
      const owner: TestAccount = entry === c ? other : who;
      const deleted = await call('POST', '/inbound/delete-1.0', {
        token: owner.token,
        body: { inbound_uuid: entry.inbound_uuid },
      });
      assert.equal(deleted.status, 200, deleted.text);
    }
    assert.equal((await fetch(rawUrl)).status, 200, 'b still uses the raw message');
    await call('POST', '/inbound/delete-1.0', { token: who.token, body: { inbound_uuid: b.inbound_uuid } });
    assert.equal((await fetch(rawUrl)).status, 404, 'gone with the last item');
  });
});
