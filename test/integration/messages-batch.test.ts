import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import {
  MessageTemplates,
  newMessage,
  prepareNewMessage,
  SendingDomains,
  storeParts,
} from '../../shared/messages/add.ts';
import { bodyHash, idempotencyLifetimeSeconds } from '../../shared/messages/idempotency.ts';
import { notYourDomainMessage } from '../../shared/messages/model/domain-ownership.ts';
import { messageAddRequest } from '../../shared/messages/schemas.ts';
import { claimBatchKey, getBatchRecord } from '../../shared/messages/store/batch-records.ts';
import { putNewMessages } from '../../shared/messages/store/messages.ts';
import { requestLimits } from '../../shared/platform/http/limits.ts';
import { outboxEml, waitForStatus } from '../support/delivery.ts';
import { type ApiResponse, type CallOptions, call, mintToken, useHostEnvironment } from '../support/host.ts';
import {
  forceStatus,
  newAccount,
  query,
  rawItem,
  type TestAccount,
  textMessage,
} from '../support/messages.ts';

/**
 * POST /message/batch-1.0 (docs/messages.md, "Batch sending"). The test host keeps the per-account
 * rate limit (50 messages/s, burst 100) and a batch pays one token per message, so calls after a
 * large batch wait as a client must (`politely`).
 */
const inHours = (hours: number) =>
  new Date(Date.now() + hours * 3600_000).toISOString().replace('Z', '+00:00');

async function politely(path: string, options: CallOptions): Promise<ApiResponse<any>> {
  for (;;) {
    const response = await call('POST', path, options);
    if (response.status !== 429) return response;
    const seconds = Number(response.headers.get('retry-after') ?? '1');
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, seconds) * 1000));
  }
}

function batch(
  who: TestAccount,
  body: Record<string, unknown>,
  options: { headers?: Record<string, string>; query?: Record<string, string>; token?: string } = {},
) {
  return politely('/message/batch-1.0', { token: options.token ?? who.token, body, ...options });
}

const item = (who: TestAccount, extra: Record<string, unknown> = {}) =>
  textMessage(who, { scheduling: { mode: 'manual-wait' }, ...extra });

/** The batch record a request leaves when it dies after recording its uuids: pending, lease run out. */
function deadRequestRecord(
  who: TestAccount,
  key: string,
  body: unknown,
  now: Date,
  results: Array<{ index: number; message_uuid: string | undefined; status: string }>,
) {
  return claimBatchKey(
    who.account,
    {
      key,
      bodyHash: bodyHash(body),
      createdAt: now.toISOString(),
      holder: 'the-request-that-died',
      leaseUntil: now.getTime() - 1,
      expiresAt: Math.floor(now.getTime() / 1000) + idempotencyLifetimeSeconds,
      now,
    },
    results,
  );
}

async function countOf(who: TestAccount): Promise<number> {
  const response = await politely('/message/query-1.0', {
    token: who.token,
    body: { filters: { limit: 1000 } },
  });
  assert.equal(response.status, 200, response.text);
  return response.body.data.count;
}

describe('POST /message/batch-1.0', () => {
  it('accepts each message as add would, answers per message in request order, and sends the immediate ones', async () => {
    const who = await newAccount('batch');
    const response = await batch(who, {
      messages: [
        textMessage(who, {
          to: ['ok@recipient.test'],
          subject: 'now',
          tags: [{ name: 'kind', value: 'now' }],
        }),
        item(who, { subject: 'held', metadata: { order_id: '1' } }),
        textMessage(who, { subject: 'later', scheduling: { mode: 'scheduled', send_at: inHours(2) } }),
        {
          ...textMessage(who, { subject: 'tenant ignored' }),
          tenant_id: 'whatever',
          scheduling: { mode: 'manual-wait' },
        },
      ],
    });
    assert.equal(response.status, 200, response.text);
    const data = response.body.data;
    assert.deepEqual(Object.keys(data).sort(), ['accepted', 'rejected', 'results']);
    assert.deepEqual([data.accepted, data.rejected], [4, 0]);
    assert.deepEqual(
      data.results.map((result: any) => [result.index, result.status]),
      [
        [0, 'queued'],
        [1, 'waiting'],
        [2, 'scheduled'],
        [3, 'waiting'],
      ],
    );
    const uuids = data.results.map((result: any) => result.message_uuid as string);
    assert.equal(new Set(uuids).size, 4);
    const subjects = await Promise.all(
      uuids.map(async (uuid: string) => (await query(who, { message_uuid: uuid })).body.data.subject),
    );
    assert.deepEqual(subjects, ['now', 'held', 'later', 'tenant ignored']);
    const held = await query(who, { message_uuid: uuids[1] });
    assert.deepEqual(held.body.data.metadata, { order_id: '1' });
    const sent = await waitForStatus(who.token, uuids[0], ['delivered']);
    assert.deepEqual(sent.tags, [{ name: 'kind', value: 'now' }]);
    // A batch's messages are found by the search filters like any other.
    const tagged = await query(who, { filters: { tag: { name: 'kind', value: 'now' } } });
    assert.deepEqual(
      tagged.body.data.messages.map((m: any) => m.message_uuid),
      [uuids[0]],
    );
  });

  it('strict (the default): one bad message refuses the batch, names the message, stores nothing', async () => {
    const who = await newAccount('batch');
    const invalidAddress = await batch(who, {
      messages: [item(who), item(who), item(who, { to: ['not-an-address'] }), item(who)],
    });
    assert.equal(invalidAddress.status, 406, invalidAddress.text);
    assert.equal(invalidAddress.body.error.code, 10000001);
    assert.deepEqual(
      invalidAddress.body.error.details.map((detail: any) => detail.field),
      ['messages[2].to[0]'],
    );
    // The code of the first bad message, with the details of every bad one.
    const mixed = await batch(who, {
      validation: 'strict',
      messages: [
        item(who),
        item(who, { subject: 'a\r\nBcc: x@evil.test' }),
        item(who),
        item(who, { cc: ['bad address'], tags: [{ name: 'a b', value: 'v' }] }),
        item(who, { scheduling: { mode: 'scheduled', send_at: '2020-01-01T00:00:00+00:00' } }),
      ],
    });
    assert.equal(mixed.body.error.code, 107);
    assert.deepEqual(
      mixed.body.error.details.map((detail: any) => detail.field),
      [
        'messages[1].subject',
        'messages[3].cc[0]',
        'messages[3].tags[0].name',
        'messages[4].scheduling.send_at',
      ],
    );
    assert.match(mixed.body.error.message, /3 of 5 messages are invalid; nothing was stored/);
    // A sender domain that is not the caller's: 113, as add answers it.
    const other = await newAccount('batch');
    const foreign = await batch(who, { messages: [item(who), item(who, { message_sender: other.sender })] });
    assert.equal(foreign.status, 403, foreign.text);
    assert.equal(foreign.body.error.code, 113);
    assert.deepEqual(foreign.body.error.details, [
      { field: 'messages[1].message_sender', message: notYourDomainMessage(other.domain, who.account) },
    ]);
    assert.equal(await countOf(who), 0, 'nothing was stored');
  });

  it('permissive: stores the good messages and reports the bad ones by index', async () => {
    const who = await newAccount('batch');
    const response = await batch(who, {
      validation: 'permissive',
      messages: [
        item(who, { subject: 'first' }),
        item(who, { to: ['nope'] }),
        item(who, { subject: 'third' }),
        { scheduling: { mode: 'manual-send', message_uuid: randomUUID() } },
        'not a message',
        item(who, { metadata: { n: 1 } }),
      ],
    });
    assert.equal(response.status, 200, response.text);
    const { results, accepted, rejected } = response.body.data;
    assert.deepEqual([accepted, rejected], [2, 4]);
    assert.deepEqual(
      results.map((result: any) => [result.index, result.status ?? result.error.code]),
      [
        [0, 'waiting'],
        [1, 10000001],
        [2, 'waiting'],
        [3, 107],
        [4, 107],
        [5, 107],
      ],
    );
    assert.deepEqual(results[1].error.details, [{ field: 'to[0]', message: 'Not a valid e-mail address' }]);
    assert.equal(results[3].error.details[0].field, 'scheduling.mode');
    assert.equal(results[5].error.details[0].field, 'metadata.n');
    const stored = await politely('/message/query-1.0', { token: who.token, body: { filters: {} } });
    assert.deepEqual(stored.body.data.messages.map((m: any) => m.subject).sort(), ['first', 'third']);
    assert.deepEqual(
      stored.body.data.messages.map((m: any) => m.message_uuid).sort(),
      [results[0].message_uuid, results[2].message_uuid].sort(),
    );
  });

  it('refuses a malformed batch itself with 107, and needs messages:send', async () => {
    const who = await newAccount('batch');
    const bad: Array<[unknown, string]> = [
      [{ messages: [] }, 'messages'],
      [{ messages: Array.from({ length: 501 }, () => item(who)) }, 'messages'],
      [{ messages: 'x' }, 'messages'],
      [{}, 'messages'],
      [{ messages: [item(who)], validation: 'lenient' }, 'validation'],
      [{ messages: [item(who)], mode: 'strict' }, 'mode'],
    ];
    for (const [body, field] of bad) {
      const response = await batch(who, body as Record<string, unknown>);
      assert.equal(response.body.error?.code, 107, JSON.stringify(body).slice(0, 200));
      assert.ok(
        response.body.error.details.some((detail: any) => detail.field === field),
        response.text.slice(0, 300),
      );
    }
    const token = await mintToken({ account: who.account, scopes: ['messages:read'] });
    const denied = await batch(who, { messages: [item(who)] }, { token });
    assert.equal(denied.body.error.code, 113);
    assert.equal(await countOf(who), 0);
  });

  it('a dry run checks everything and stores nothing', async () => {
    const who = await newAccount('batch');
    const body = { validation: 'permissive', messages: [item(who), item(who, { to: ['x'] })] };
    const response = await batch(who, body, {
      query: { dry_run: 'true' },
      headers: { 'Idempotency-Key': 'dry-1' },
    });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.data, {
      results: [{ index: 0, message_uuid: null, status: 'waiting' }, response.body.data.results[1]],
      accepted: 1,
      rejected: 1,
      dry_run: true,
    });
    assert.equal(response.body.data.results[1].error.code, 10000001);
    assert.equal(await countOf(who), 0);
    // The key was not used: the real request afterwards stores the message.
    const real = await batch(who, body, { headers: { 'Idempotency-Key': 'dry-1' } });
    assert.equal(real.body.data.accepted, 1);
    assert.match(real.body.data.results[0].message_uuid, /^[0-9a-f-]{36}$/);
    assert.equal(await countOf(who), 1);
  });

  it('one Idempotency-Key for the batch: a retry gets the same uuids, another body is 111', async () => {
    const who = await newAccount('batch');
    const body = {
      validation: 'permissive',
      messages: [item(who, { subject: 'a' }), item(who, { to: ['x'] }), item(who, { subject: 'c' })],
    };
    const headers = { 'Idempotency-Key': `nightly-${randomUUID()}` };
    const first = await batch(who, body, { headers });
    assert.equal(first.status, 200, first.text);
    const again = await batch(who, JSON.parse(JSON.stringify(body)), { headers });
    assert.deepEqual(again.body.data, first.body.data);
    // Key order and whitespace do not make another body.
    const reordered = { messages: body.messages, validation: 'permissive' };
    assert.deepEqual((await batch(who, reordered, { headers })).body.data, first.body.data);
    assert.equal(await countOf(who), 2, 'stored once');
    const other = await batch(who, { ...body, validation: 'strict' }, { headers });
    assert.equal(other.status, 406);
    assert.equal(other.body.error.code, 111);
    // A key is one request's, whichever route used it first.
    const onAdd = await politely('/message/add-1.0', { token: who.token, body: item(who), headers });
    assert.equal(onAdd.body.error.code, 111);
    const addKey = { 'Idempotency-Key': `single-${randomUUID()}` };
    assert.equal(
      (await politely('/message/add-1.0', { token: who.token, body: item(who), headers: addKey })).status,
      200,
    );
    assert.equal((await batch(who, body, { headers: addKey })).body.error.code, 111);
    // Concurrent retries of one batch store it once and all get the same answer.
    const racing = { 'Idempotency-Key': `race-${randomUUID()}` };
    const raceBody = { messages: [item(who, { subject: 'r1' }), item(who, { subject: 'r2' })] };
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => batch(who, raceBody, { headers: racing })),
    );
    for (const answer of answers) assert.deepEqual(answer.body.data, answers[0]?.body.data);
    const racedUuids = answers[0]?.body.data.results.map((result: any) => result.message_uuid);
    assert.deepEqual(
      await Promise.all(racedUuids.map(async (uuid: string) => (await rawItem(uuid))?.subject)),
      ['r1', 'r2'],
    );
    assert.equal(await countOf(who), 2 + 1 + 2);
  });

  it('a retry completes a batch whose request died after recording it, with the recorded uuids', async () => {
    useHostEnvironment();
    const who = await newAccount('batch');
    const body = {
      messages: [
        textMessage(who, { to: ['ok@recipient.test'], subject: 'x1' }),
        item(who, { subject: 'x2' }),
      ],
    };
    const key = `crash-${randomUUID()}`;
    const uuids = [randomUUID(), randomUUID()];
    // What the dead request left: a pending record whose lease has run out, and no message yet.
    const claimed = await deadRequestRecord(who, key, body, new Date(), [
      { index: 0, message_uuid: uuids[0], status: 'queued' },
      { index: 1, message_uuid: uuids[1], status: 'waiting' },
    ]);
    assert.deepEqual(claimed, { claimed: true });
    const retry = await batch(who, body, { headers: { 'Idempotency-Key': key } });
    assert.equal(retry.status, 200, retry.text);
    assert.deepEqual(
      retry.body.data.results.map((result: any) => result.message_uuid),
      uuids,
    );
    assert.equal((await rawItem(uuids[1] as string))?.subject, 'x2');
    await waitForStatus(who.token, uuids[0] as string, ['delivered']);
    assert.equal((await getBatchRecord(who.account, key, new Date()))?.state, 'done');
    const replay = await batch(who, body, { headers: { 'Idempotency-Key': key } });
    assert.deepEqual(replay.body.data, retry.body.data);
    assert.equal(await countOf(who), 2);
  });

  it('completing a batch leaves alone a message the dead request had stored and that has moved on since', async () => {
    useHostEnvironment();
    const who = await newAccount('batch');
    const body = { messages: [item(who, { subject: 'y1' }), item(who, { subject: 'y2' })] };
    const key = `half-${randomUUID()}`;
    const now = new Date();
    const uuids = [randomUUID(), randomUUID()];
    await deadRequestRecord(
      who,
      key,
      body,
      now,
      uuids.map((uuid, index) => ({ index, message_uuid: uuid, status: 'waiting' })),
    );
    // The dead request had stored the first message, exactly as the batch lays it out, and it was
    // cancelled since.
    const prepared = await prepareNewMessage(
      messageAddRequest.parse(body.messages[0]),
      new SendingDomains(who.account),
      now,
      new MessageTemplates(who.account),
    );
    const first = newMessage(prepared, uuids[0] as string, who.account, now);
    await storeParts([first], true);
    await putNewMessages([{ item: first.item, dueAt: first.dueAt }]);
    assert.ok(await forceStatus(uuids[0] as string, 'cancelled', 'waiting'));

    const retry = await batch(who, body, { headers: { 'Idempotency-Key': key } });
    assert.equal(retry.status, 200, retry.text);
    assert.deepEqual(
      retry.body.data.results.map((result: any) => [result.message_uuid, result.status]),
      [
        [uuids[0], 'waiting'],
        [uuids[1], 'waiting'],
      ],
    );
    assert.equal((await rawItem(uuids[0] as string))?.status, 'cancelled', 'not reset by the retry');
    assert.equal((await rawItem(uuids[1] as string))?.subject, 'y2', 'the missing one written');
    assert.equal(await countOf(who), 2);
  });

  it('counts messages against the rate limit: a batch may take the bucket into debt', async () => {
    const who = await newAccount('batch');
    // The bucket holds 100 tokens (refilling 50 a second): 160 messages take it about 60 into debt
    // when they are counted, at the start of the request (test/integration/hardening-secondary.test.ts
    // checks the refusals that follow, on a host whose buckets do not refill).
    const large = await call('POST', '/message/batch-1.0', {
      token: who.token,
      body: { messages: Array.from({ length: 160 }, () => item(who)) },
    });
    assert.equal(large.status, 200, large.text);
    assert.equal(large.headers.get('ratelimit-remaining'), '0');
    assert.ok(Number(large.headers.get('ratelimit-reset')) >= 2, 'the debt takes seconds to repay');
    // Once the debt is paid back the account sends again.
    const later = await politely('/message/add-1.0', { token: who.token, body: item(who) });
    assert.equal(later.status, 200, later.text);
  });

  it('takes 500 messages with attachments up to the 6 MB limit; one byte over is 107', async () => {
    const who = await newAccount('batch');
    const limit = requestLimits.maxBodyBytes;
    const build = (size: number) => {
      const messages = Array.from({ length: 500 }, (_, index) =>
        item(who, {
          subject: `Invoice ${index}`,
          attachments: [
            {
              filename: `invoice-${index}.pdf`,
              content_type: 'application/pdf',
              content: Buffer.alloc(size, index % 251).toString('base64'),
            },
          ],
        }),
      );
      return JSON.stringify({ messages });
    };
    // The largest attachments that keep the body under the limit (3 more bytes each add 4 base64
    // characters to each of the 500), then spaces up to it exactly.
    const base = Buffer.byteLength(build(9000));
    const size = 9000 + 3 * Math.floor((limit - base) / (4 * 500));
    const json = build(size);
    assert.ok(limit - Buffer.byteLength(json) < 4 * 500);
    const exact = `${json.slice(0, -1)}${' '.repeat(limit - Buffer.byteLength(json))}}`;
    assert.equal(Buffer.byteLength(exact), limit);
    const response = await call('POST', '/message/batch-1.0', {
      token: who.token,
      rawBody: exact,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 200, response.text.slice(0, 500));
    assert.deepEqual([response.body.data.accepted, response.body.data.rejected], [500, 0]);
    const over = await call('POST', '/message/batch-1.0', {
      token: who.token,
      rawBody: `${exact.slice(0, -1)} }`,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(over.status, 406);
    assert.equal(over.body.error.code, 107);
    assert.match(over.body.error.details[0].message, /6 MB/);
    // The stored attachments are whole: release one and read it back from the sent message.
    const uuid = response.body.data.results[499].message_uuid as string;
    const stored = await politely('/message/query-1.0', { token: who.token, body: { message_uuid: uuid } });
    assert.deepEqual(stored.body.data.attachments, [
      { filename: 'invoice-499.pdf', content_type: 'application/pdf', size },
    ]);
    const released = await politely('/message/add-1.0', {
      token: who.token,
      body: { scheduling: { mode: 'manual-send', message_uuid: uuid } },
    });
    assert.equal(released.status, 200, released.text);
    await waitForStatus(who.token, uuid, ['delivered']);
    const sentEml = outboxEml(uuid)?.toString('utf8') ?? '';
    assert.ok(
      sentEml.replace(/\r?\n/g, '').includes(
        Buffer.alloc(size, 499 % 251)
          .toString('base64')
          .slice(0, 2000),
      ),
      'the attachment arrived intact',
    );
  });
});
