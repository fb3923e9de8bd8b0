import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { registerDomain } from '../../shared/domains/registry.ts';
import { notYourDomainMessage } from '../../shared/messages/model/domain-ownership.ts';
import { call, mintToken, uniqueDomain } from '../support/host.ts';
import {
  add,
  created,
  isoWithOffset,
  newAccount,
  objectExists,
  query,
  rawItem,
  textMessage,
} from '../support/messages.ts';

const inDays = (days: number) => new Date(Date.now() + days * 24 * 3600 * 1000);
const withOffset = (date: Date) => date.toISOString().replace('Z', '+00:00');
const eml = (text: string) => Buffer.from(text.replace(/\n/g, '\r\n')).toString('base64');

describe('POST /message/add-1.0', () => {
  it('answers only message_uuid and status (rule 1) and queues the message', async () => {
    const who = await newAccount();
    const response = await add(who, textMessage(who));
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(response.body), ['data']);
    assert.deepEqual(Object.keys(response.body.data).sort(), ['message_uuid', 'status']);
    assert.match(response.body.data.message_uuid, /^[0-9a-f-]{36}$/);
    assert.equal(response.body.data.status, 'queued');
    const item = await rawItem(response.body.data.message_uuid);
    assert.equal(item?.account_id, who.account);
    assert.deepEqual(item?.history[0], { status: 'queued', at: item?.created_at, detail: 'immediate' });
    // Its listing lane and watch entry: test/integration/message-index-layout.test.ts.
    const listed = (await query(who, { message_uuid: response.body.data.message_uuid })).body.data;
    assert.equal(listed.message_uuid, response.body.data.message_uuid);
  });

  it('ignores tenant_id: the tenant is the lower-cased domain of message_sender (rule 2)', async () => {
    const who = await newAccount();
    const other = await newAccount();
    const response = await add(
      who,
      textMessage(who, {
        tenant_id: other.domain,
        message_sender: `Sender <NoReply@${who.domain.toUpperCase()}>`,
      }),
    );
    assert.equal(response.status, 200);
    const item = await rawItem(response.body.data.message_uuid);
    assert.equal(item?.tenant, who.domain);
    assert.equal(item?.message_sender, `NoReply@${who.domain}`);
    assert.equal(item?.tenant_id, undefined);
    assert.ok(!JSON.stringify(item).includes(other.domain));
  });

  it('refuses a sender domain that is not the caller’s with 113', async () => {
    const who = await newAccount();
    const other = await newAccount();
    for (const sender of [other.sender, `x@${uniqueDomain('unregistered')}`]) {
      const response = await add(who, textMessage(who, { message_sender: sender }));
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.error.code, 113);
    }
    const foreignFrom = await add(who, textMessage(who, { from: [other.sender] }));
    assert.equal(foreignFrom.body.error.code, 113);
  });

  it('checks a sender named on manual-send or manual-cancel like any other (113)', async () => {
    const who = await newAccount();
    const other = await newAccount();
    const held = await created(who, { scheduling: { mode: 'manual-wait' } });
    for (const mode of ['manual-send', 'manual-cancel']) {
      const foreign = await add(who, {
        message_sender: other.sender,
        scheduling: { mode, message_uuid: held },
      });
      assert.equal(foreign.body.error?.code, 113, foreign.text);
      assert.deepEqual(foreign.body.error.details, [
        { field: 'message_sender', message: notYourDomainMessage(other.domain, who.account) },
      ]);
    }
    const own = await add(who, {
      message_sender: who.sender,
      scheduling: { mode: 'manual-cancel', message_uuid: held },
    });
    assert.equal(own.body.data?.status, 'cancelled', own.text);
  });

  it('refuses a token without messages:send with 113', async () => {
    const who = await newAccount();
    const token = await mintToken({ account: who.account, scopes: ['messages:read'] });
    const response = await call('POST', '/message/add-1.0', { token, body: textMessage(who) });
    assert.equal(response.status, 403);
    assert.equal(response.body.error.code, 113);
  });

  // The schema's answers (106, 10000001, 107 with details) are unit tests with no server:
  // test/unit/message-add-input.test.ts. The action checks send_at against the clock.
  it('answers a send_at in the past, more than 30 days ahead or without an offset with 107', async () => {
    const who = await newAccount();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ scheduling: { mode: 'scheduled', send_at: withOffset(inDays(-1)) } }, 'scheduling.send_at'],
      [{ scheduling: { mode: 'scheduled', send_at: withOffset(inDays(31)) } }, 'scheduling.send_at'],
      [{ scheduling: { mode: 'scheduled', send_at: '2030-01-01T10:00:00' } }, 'scheduling.send_at'],
    ];
    for (const [change, field] of cases) {
      const response = await add(who, textMessage(who, change));
      assert.equal(response.status, 406, `${field}: ${response.text}`);
      assert.equal(response.body.error.code, 107, `${field}: ${response.text}`);
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field === field),
        `${field}: ${response.text}`,
      );
    }
  });

  it('answers a body over 6 MB with 107 from the gateway, and creates nothing', async () => {
    const who = await newAccount();
    const big = Buffer.alloc(6 * 1024 * 1024).toString('base64');
    const response = await add(
      who,
      textMessage(who, {
        scheduling: { mode: 'manual-wait' },
        attachments: [{ filename: 'big.bin', content_type: 'application/octet-stream', content: big }],
      }),
    );
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    assert.equal((await query(who, { filters: {} })).body.data.count, 0);
  });

  it('answers a wrong Idempotency-Key format with 107', async () => {
    const who = await newAccount();
    const response = await add(who, textMessage(who), { headers: { 'Idempotency-Key': 'x'.repeat(300) } });
    assert.equal(response.body.error.code, 107);
  });

  it('stores bodies and attachments in S3 under one prefix, with metadata in the message', async () => {
    const who = await newAccount();
    const uuid = await created(who, {
      content: { kind: 'mixed', text: 'plain', html: '<p>rich</p>' },
      attachments: [
        { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('hello').toString('base64') },
        {
          filename: 'b.bin',
          content_type: 'application/octet-stream',
          content: Buffer.alloc(300).toString('base64'),
        },
      ],
      headers: { 'X-Campaign': 'welcome' },
      to: ['Jörg <joerg@bücher.example>'],
      scheduling: { mode: 'manual-wait' },
    });
    // With attachments, every part and attachment is in one S3 object per message.
    assert.ok(await objectExists(`messages/${uuid}/content`));
    assert.equal((await rawItem(uuid))?.content.store, 's3');
    const details = (await query(who, { message_uuid: uuid })).body.data;
    assert.equal(details.content_kind, 'mixed');
    assert.deepEqual(details.attachments, [
      { filename: 'a.txt', content_type: 'text/plain', size: 5 },
      { filename: 'b.bin', content_type: 'application/octet-stream', size: 300 },
    ]);
    assert.deepEqual(details.headers, { 'X-Campaign': 'welcome' });
    assert.deepEqual(
      details.recipients.map((r: any) => [r.email, r.name, r.kind, r.status]),
      [['joerg@xn--bcher-kva.example', 'Jörg', 'to', 'pending']],
    );
    assert.ok(!JSON.stringify(details).includes('aGVsbG8'));
  });

  it('takes recipients and subject from an EML message when the request names none', async () => {
    const who = await newAccount();
    const raw = eml(
      `From: Shop <${who.sender}>\nTo: Bob <bob@recipient.test>, carol@recipient.test\nCc: dave@recipient.test\nSubject: Your order\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\nThanks!\n`,
    );
    const response = await add(who, {
      message_sender: who.sender,
      content: { kind: 'eml', eml: raw },
      scheduling: { mode: 'manual-wait' },
    });
    assert.equal(response.status, 200, response.text);
    const details = (await query(who, { message_uuid: response.body.data.message_uuid })).body.data;
    assert.equal(details.subject, 'Your order');
    assert.equal(details.content_kind, 'eml');
    assert.deepEqual(
      details.recipients.map((r: any) => `${r.kind}:${r.email}`),
      ['to:bob@recipient.test', 'to:carol@recipient.test', 'cc:dave@recipient.test'],
    );
    // A small EML goes to the content item beside the message (the item's `content` is then left
    // out as the default): no S3 object at all.
    const emlItem = await rawItem(response.body.data.message_uuid);
    assert.equal(emlItem?.content, undefined);
    assert.equal(await objectExists(`messages/${response.body.data.message_uuid}/content`), false);

    const noHeaders = await add(who, {
      message_sender: who.sender,
      to: ['a@recipient.test'],
      content: { kind: 'eml', eml: eml('just text') },
    });
    assert.equal(noHeaders.body.error.code, 107, noHeaders.text);
    assert.equal(noHeaders.body.error.details[0].field, 'content.eml');
    const noRecipients = await add(who, {
      message_sender: who.sender,
      content: { kind: 'eml', eml: eml(`From: ${who.sender}\nSubject: x\n\nbody\n`) },
    });
    assert.equal(noRecipients.body.error.code, 107, noRecipients.text);
  });

  it('schedules: scheduled with send_at, manual-wait, and rejects the wrong states and targets', async () => {
    const who = await newAccount();
    const other = await newAccount();
    const sendAt = inDays(2);
    const scheduled = await add(
      who,
      textMessage(who, { scheduling: { mode: 'scheduled', send_at: withOffset(sendAt) } }),
    );
    assert.deepEqual(scheduled.body.data.status, 'scheduled');
    // The index entries add writes (due at the send time, or at the hold's end; a watch entry once
    // released; none once cancelled): test/integration/message-index-layout.test.ts.
    const details = (await query(who, { message_uuid: scheduled.body.data.message_uuid })).body.data;
    assert.equal(details.scheduling.mode, 'scheduled');
    assert.match(details.scheduling.send_at, isoWithOffset);
    assert.equal(Date.parse(details.scheduling.send_at), sendAt.getTime());

    const waiting = await add(who, textMessage(who, { scheduling: { mode: 'manual-wait' } }));
    assert.equal(waiting.body.data.status, 'waiting');

    // manual-send releases the waiting message now
    const release = await add(who, {
      scheduling: { mode: 'manual-send', message_uuid: waiting.body.data.message_uuid },
    });
    assert.deepEqual(release.body, {
      data: { message_uuid: waiting.body.data.message_uuid, status: 'queued' },
    });
    const released = (await query(who, { message_uuid: waiting.body.data.message_uuid })).body.data;
    assert.deepEqual(released.status_history.map((entry: any) => [entry.status, entry.detail]).slice(0, 2), [
      ['waiting', 'manual-wait'],
      ['queued', 'manual-send'],
    ]);

    // manual-cancel cancels the scheduled one and takes it off the due index
    const cancel = await add(who, {
      scheduling: { mode: 'manual-cancel', message_uuid: scheduled.body.data.message_uuid },
    });
    assert.deepEqual(cancel.body, {
      data: { message_uuid: scheduled.body.data.message_uuid, status: 'cancelled' },
    });
    const history = (await query(who, { message_uuid: scheduled.body.data.message_uuid })).body.data
      .status_history;
    assert.deepEqual(
      history.map((entry: any) => entry.status),
      ['scheduled', 'cancelled'],
    );
    for (const entry of history) assert.match(entry.at, isoWithOffset);

    // a cancelled message can be neither sent nor cancelled again: 111
    for (const mode of ['manual-send', 'manual-cancel']) {
      const again = await add(who, { scheduling: { mode, message_uuid: scheduled.body.data.message_uuid } });
      assert.equal(again.status, 406);
      assert.equal(again.body.error.code, 111);
    }
    // unknown and foreign targets: 112, and the foreign message is untouched
    const foreign = await created(other, { scheduling: { mode: 'manual-wait' } });
    for (const target of [foreign, '5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3']) {
      const response = await add(who, { scheduling: { mode: 'manual-cancel', message_uuid: target } });
      assert.equal(response.status, 404);
      assert.equal(response.body.error.code, 112);
    }
    assert.equal((await rawItem(foreign))?.status, 'waiting');
  });

  it('replays the first response for a repeated Idempotency-Key and refuses it with another body (111)', async () => {
    const who = await newAccount();
    const key = `key-${Date.now()}`;
    const first = await add(who, textMessage(who, { scheduling: { mode: 'manual-wait' } }), {
      headers: { 'Idempotency-Key': key },
    });
    // the same body with other key order and whitespace counts as the same request
    const body = textMessage(who, { scheduling: { mode: 'manual-wait' } });
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const second = await add(who, reordered, { headers: { 'Idempotency-Key': key } });
    assert.deepEqual(second.body, first.body);
    const list = await query(who, { filters: {} });
    assert.equal(list.body.data.count, 1);

    const different = await add(who, textMessage(who, { subject: 'Other' }), {
      headers: { 'Idempotency-Key': key },
    });
    assert.equal(different.status, 406);
    assert.equal(different.body.error.code, 111);

    // the same key on another account is another request
    const other = await newAccount();
    const elsewhere = await add(other, textMessage(other), { headers: { 'Idempotency-Key': key } });
    assert.notEqual(elsewhere.body.data.message_uuid, first.body.data.message_uuid);
  });

  it('creates exactly one message for concurrent identical requests with one key', async () => {
    const who = await newAccount();
    const body = textMessage(who, { scheduling: { mode: 'manual-wait' } });
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => add(who, body, { headers: { 'Idempotency-Key': 'same-order-42' } })),
    );
    for (const response of responses) assert.equal(response.status, 200, response.text);
    const uuids = new Set(responses.map((response) => response.body.data.message_uuid));
    assert.equal(uuids.size, 1);
    const list = await query(who, { filters: {} });
    assert.equal(list.body.data.count, 1);
    assert.equal(list.body.data.messages[0].message_uuid, [...uuids][0]);
  });

  it('replays manual-cancel with the same key instead of answering 111', async () => {
    const who = await newAccount();
    const uuid = await created(who, { scheduling: { mode: 'manual-wait' } });
    const body = { scheduling: { mode: 'manual-cancel', message_uuid: uuid } };
    const first = await add(who, body, { headers: { 'Idempotency-Key': 'cancel-1' } });
    const again = await add(who, body, { headers: { 'Idempotency-Key': 'cancel-1' } });
    assert.deepEqual(first.body, { data: { message_uuid: uuid, status: 'cancelled' } });
    assert.deepEqual(again.body, first.body);
    const history = (await query(who, { message_uuid: uuid })).body.data.status_history;
    assert.equal(history.length, 2);
  });

  it('dry run: runs every check, creates nothing and says what would happen', async () => {
    const who = await newAccount();
    const dry = { dry_run: 'true' };
    const response = await add(who, textMessage(who), {
      query: dry,
      headers: { 'Idempotency-Key': 'dry-1' },
    });
    assert.deepEqual(response.body, { data: { message_uuid: null, status: 'queued', dry_run: true } });
    const scheduled = await add(
      who,
      textMessage(who, { scheduling: { mode: 'scheduled', send_at: withOffset(inDays(1)) } }),
      { query: dry },
    );
    assert.equal(scheduled.body.data.status, 'scheduled');
    assert.equal((await query(who, { filters: {} })).body.data.count, 0);
    // the key was not consumed by the dry run
    const real = await add(who, textMessage(who, { subject: 'different' }), {
      headers: { 'Idempotency-Key': 'dry-1' },
    });
    assert.equal(real.status, 200);

    const invalid = await add(who, textMessage(who, { to: ['bad'] }), { query: dry });
    assert.equal(invalid.body.error.code, 10000001);
    const foreign = await add(who, textMessage(who, { message_sender: 'a@elsewhere.test' }), { query: dry });
    assert.equal(foreign.body.error.code, 113);

    const waiting = await created(who, { scheduling: { mode: 'manual-wait' } });
    const release = await add(
      who,
      { scheduling: { mode: 'manual-send', message_uuid: waiting } },
      { query: dry },
    );
    assert.deepEqual(release.body, { data: { message_uuid: waiting, status: 'queued', dry_run: true } });
    assert.equal((await rawItem(waiting))?.status, 'waiting');
  });

  it('accepts a sender on a second domain of the account, given as {email, name}', async () => {
    const who = await newAccount();
    const extra = uniqueDomain('second');
    await registerDomain(extra, who.account);
    const response = await add(
      who,
      textMessage(who, { message_sender: { email: `hello@${extra}`, name: 'Hello' } }),
    );
    assert.equal(response.status, 200, response.text);
  });
});
