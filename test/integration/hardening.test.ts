import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'vitest';
import { getIdempotencyRecord } from '../../shared/messages/store/messages.ts';
import { workEntryTimeOf } from '../support/delivery.ts';
import { fakeGravatarPng, gravatarHits, setGravatar } from '../support/fake-gravatar.ts';
import { call, hostInfo, useHostEnvironment } from '../support/host.ts';
import {
  add,
  newAccount,
  objectExists,
  query,
  rawItem,
  type TestAccount,
  textMessage,
} from '../support/messages.ts';

/**
 * The review's findings (issue "Hardening"), one test each, through the local gateway: each of
 * these failed on the code before the fix.
 */

const eml = (text: string) => Buffer.from(text.replace(/\n/g, '\r\n')).toString('base64');

function emlFrom(from: string, extraHeaders = '', recipient = 'ada@recipient.test'): string {
  return eml(`From: ${from}
${extraHeaders}To: ${recipient}
Subject: Invoice
Date: Mon, 23 Nov 2026 09:00:00 +0000
Message-ID: <inv-1@example.test>
Content-Type: text/plain; charset=utf-8

Pay now.
`);
}

/** The account's messages, as a filter query sees them. */
async function countOf(who: TestAccount): Promise<number> {
  const response = await query(who, { filters: { limit: 100 } });
  assert.equal(response.status, 200);
  return response.body.data.count as number;
}

describe('sender ownership (the spoofing finding)', () => {
  it('refuses an EML whose From names another account’s domain, even with JSON from set (113)', async () => {
    const attacker = await newAccount('spoof');
    const victim = await newAccount('victim');
    const response = await add(attacker, {
      message_sender: attacker.sender,
      from: [attacker.sender],
      content: { kind: 'eml', eml: emlFrom(`CEO <ceo@${victim.domain}>`) },
    });
    assert.equal(response.status, 403);
    assert.equal(response.body.error.code, 113);
    assert.match(response.body.error.message, new RegExp(victim.domain.replace(/\./g, '\\.')));
    assert.equal(await countOf(attacker), 0, 'nothing was stored, so nothing is sent');
  });

  it('checks a second From header and the Sender header too (113)', async () => {
    const attacker = await newAccount('spoof');
    const victim = await newAccount('victim');
    const twoFroms = await add(attacker, {
      message_sender: attacker.sender,
      content: {
        kind: 'eml',
        eml: emlFrom(attacker.sender, `From: Support <help@${victim.domain}>\n`),
      },
    });
    assert.equal(twoFroms.status, 403);
    assert.equal(twoFroms.body.error.code, 113);
    const sender = await add(attacker, {
      message_sender: attacker.sender,
      content: { kind: 'eml', eml: emlFrom(attacker.sender, `Sender: bulk@${victim.domain}\n`) },
    });
    assert.equal(sender.status, 403);
    assert.equal(sender.body.error.code, 113);
  });

  it('requires JSON from and the EML From to agree when both are given (107)', async () => {
    const who = await newAccount('agree');
    const response = await add(who, {
      message_sender: who.sender,
      from: [`other@${who.domain}`],
      content: { kind: 'eml', eml: emlFrom(`Billing <billing@${who.domain}>`) },
    });
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    assert.equal(response.body.error.details[0].field, 'from');
    const agreeing = await add(who, {
      message_sender: who.sender,
      from: [`BILLING@${who.domain}`],
      content: { kind: 'eml', eml: emlFrom(`Billing <billing@${who.domain}>`) },
    });
    assert.equal(agreeing.status, 200);
  });

  it('counts the attachments inside an EML against the 50-attachment limit (107)', async () => {
    const who = await newAccount('att');
    const parts = Array.from(
      { length: 51 },
      (_, index) => `--b
Content-Type: application/octet-stream
Content-Disposition: attachment; filename="f${index}.bin"
Content-Transfer-Encoding: base64

AAEC
`,
    ).join('');
    const message = eml(`From: ${who.sender}
To: ada@recipient.test
Subject: Many
Content-Type: multipart/mixed; boundary="b"

--b
Content-Type: text/plain

Body
${parts}--b--
`);
    const response = await add(who, { message_sender: who.sender, content: { kind: 'eml', eml: message } });
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    assert.match(response.body.error.details[0].message, /51 attachments; at most 50/);
  });
});

describe('strict input', () => {
  it('answers 107 to "schedule" (a typo of scheduling) and sends nothing', async () => {
    const who = await newAccount('typo');
    const response = await add(who, textMessage(who, { schedule: { mode: 'manual-wait' } }));
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    assert.deepEqual(response.body.error.details, [
      { field: 'schedule', message: 'Unknown field "schedule"' },
    ]);
    assert.equal(await countOf(who), 0, 'no message was created, so none can be sent');
  });

  it('names every unknown field, nested ones with their path', async () => {
    const who = await newAccount('strict');
    const response = await add(
      who,
      textMessage(who, {
        priority: 'high',
        content: { kind: 'text_only', text: 'x', html: '<p>x</p>' },
        scheduling: { mode: 'immediate', send_at: '2026-12-01T10:00:00+00:00' },
      }),
    );
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    const fields = response.body.error.details.map((detail: { field: string }) => detail.field).sort();
    assert.deepEqual(fields, ['content.html', 'priority', 'scheduling.send_at']);
  });

  it('answers 107 to an unknown query parameter on a body route and on a query route', async () => {
    const who = await newAccount('query');
    const body = await add(who, textMessage(who), { query: { dryrun: 'true' } });
    assert.equal(body.status, 406);
    assert.equal(body.body.error.code, 107);
    assert.equal(body.body.error.details[0].field, '?dryrun');
    assert.equal(await countOf(who), 0);
    const status = await call('GET', '/domain/dkim/status-1.0', {
      token: who.token,
      query: { domain: who.domain, verbose: '1' },
    });
    assert.equal(status.status, 406);
    assert.equal(status.body.error.details[0].field, 'verbose');
  });

  it('accepts tenant_id alone, ignores it, and keeps it out of the idempotency hash', async () => {
    const who = await newAccount('tenant');
    const key = `tenant-${Date.now()}`;
    const first = await add(who, textMessage(who, { tenant_id: 'anything' }), {
      headers: { 'idempotency-key': key },
    });
    assert.equal(first.status, 200);
    const again = await add(who, textMessage(who), { headers: { 'idempotency-key': key } });
    assert.equal(again.status, 200, 'the same request without tenant_id is a replay, not a conflict');
    assert.equal(again.body.data.message_uuid, first.body.data.message_uuid);
    const dkim = await call('GET', '/domain/dkim/status-1.0', {
      token: who.token,
      query: { domain: who.domain, tenant_id: 'x' },
    });
    assert.equal(dkim.status, 200);
  });

  it('says "required" for a missing field and lists the allowed values of an enumeration', async () => {
    const who = await newAccount('enum');
    const missing = await call('POST', '/domain/dkim/set-algorithm-1.0', {
      token: who.token,
      body: { domain: who.domain },
    });
    assert.equal(missing.status, 406);
    assert.deepEqual(missing.body.error.details, [{ field: 'algorithm', message: 'algorithm is required' }]);
    const wrong = await call('POST', '/domain/dkim/set-algorithm-1.0', {
      token: who.token,
      body: { domain: who.domain, algorithm: 'rsa' },
    });
    assert.equal(wrong.status, 406);
    assert.match(wrong.body.error.details[0].message, /rsa-sha256, ed25519-sha256/);
    const status = await query(who, { filters: { status: 'sending' } });
    assert.equal(status.status, 406);
    assert.match(status.body.error.details[0].message, /queued, .*delivered/);
  });

  it('names the allowed method in a 405', async () => {
    const response = await call('GET', '/message/add-1.0');
    assert.equal(response.status, 405);
    assert.equal(response.body.error.code, 102);
    assert.equal(response.headers.get('allow'), 'POST');
    assert.match(response.body.error.message, /accepts only POST/);
  });
});

describe('sizes that can never break storage', () => {
  it('answers 107, never 500, to a 500 KB display name', async () => {
    const who = await newAccount('name');
    const huge = 'N'.repeat(500 * 1024);
    for (const to of [[{ email: 'ada@recipient.test', name: huge }], [`${huge} <ada@recipient.test>`]]) {
      const response = await add(who, textMessage(who, { to }));
      assert.equal(response.status, 406, JSON.stringify(response.body).slice(0, 300));
      assert.equal(response.body.error.code, 107);
      assert.match(response.body.error.details[0].message, /at most/);
    }
    const sender = await add(who, textMessage(who, { message_sender: { email: who.sender, name: huge } }));
    assert.equal(sender.body.error.code, 107);
    assert.equal(await countOf(who), 0);
  });

  it('bounds custom headers to 16 KB together and the message record to 200 KB', async () => {
    const who = await newAccount('size');
    const headers = Object.fromEntries(
      Array.from({ length: 20 }, (_, index) => [`X-Big-${index}`, 'v'.repeat(990)]),
    );
    const tooMany = await add(who, textMessage(who, { headers }));
    assert.equal(tooMany.status, 406);
    assert.match(tooMany.body.error.details[0].message, /16 KB/);
    // Every field within its own bound (256-character names of 3-byte characters, long addresses,
    // 15 KB of headers), but all together too large for a record that must still grow.
    const name = '名'.repeat(256);
    const local = (prefix: string, index: number) => `${prefix}${index}`.padEnd(64, 'x');
    const farDomain = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.test`;
    const list = (prefix: string, domain: string) =>
      Array.from({ length: 50 }, (_, index) => ({ email: `${local(prefix, index)}@${domain}`, name }));
    const record = await add(
      who,
      textMessage(who, {
        from: list('f', who.domain),
        reply_to: list('r', who.domain),
        to: list('t', farDomain),
        headers: Object.fromEntries(
          Array.from({ length: 15 }, (_, index) => [`X-Fill-${index}`, 'v'.repeat(990)]),
        ),
      }),
    );
    assert.equal(record.status, 406, JSON.stringify(record.body).slice(0, 300));
    assert.match(record.body.error.details[0].message, /at most 200 KB/);
  });

  it('keeps the history at 64 entries for life: later changes overwrite the last one', async () => {
    const who = await newAccount('hist');
    const response = await add(who, textMessage(who, { scheduling: { mode: 'manual-wait' } }));
    const uuid = response.body.data.message_uuid as string;
    useHostEnvironment();
    const { postponeDue } = await import('../../shared/delivery/store/message-delivery.ts');
    const start = Date.now() + 40 * 24 * 3600 * 1000;
    for (let change = 0; change < 70; change++) {
      const item = await rawItem(uuid);
      const moved = await postponeDue(
        { message_uuid: uuid, status: item?.status, due_at: item?.due_at, lease_until: item?.lease_until },
        {
          nowMs: Date.now(),
          nextDueMs: start + change * 1000,
          watchAtMs: start + change * 1000,
          detail: `change ${change} ${'d'.repeat(1000)}`,
        },
      );
      assert.ok(moved, `change ${change} applied`);
    }
    const item = await rawItem(uuid);
    assert.equal(item?.history.length, 64);
    const last = item?.history[63];
    assert.match(last.detail, /^history full, latest change: change 69 d+…$/);
    assert.ok(last.detail.length <= 300, 'details are clipped to 300 characters');
    assert.ok(item?.history[62].detail.startsWith('change 61 '), 'entries before the last are kept');
    assert.equal(Date.parse(String(item?.due_at)), start + 69 * 1000, 'the change itself applied');
  });

  it('answers a body over the gateway limit (7 MB) with 107 and HTTP 406, naming the limit in MB', async () => {
    const who = await newAccount('big');
    const response = await call('POST', '/message/add-1.0', {
      token: who.token,
      rawBody: JSON.stringify(
        textMessage(who, { content: { kind: 'text_only', text: 'x'.repeat(7 * 1024 * 1024) } }),
      ),
    });
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    assert.match(response.body.error.details[0].message, /6 MB/);
    assert.ok(response.headers.get('x-request-id'));
  });
});

describe('dates', () => {
  it('answers 107 to an impossible calendar date (2026-02-30)', async () => {
    const who = await newAccount('date');
    const scheduled = await add(
      who,
      textMessage(who, { scheduling: { mode: 'scheduled', send_at: '2026-02-30T10:00:00+00:00' } }),
    );
    assert.equal(scheduled.status, 406);
    assert.equal(scheduled.body.error.code, 107);
    assert.match(scheduled.body.error.details[0].message, /calendar/);
    const filter = await query(who, { filters: { date_from: '2026-02-30T00:00:00+00:00' } });
    assert.equal(filter.status, 406);
    assert.equal(filter.body.error.code, 107);
    const hour = await query(who, { filters: { date_to: '2026-03-01T24:30:00+00:00' } });
    assert.equal(hour.status, 406);
    assert.equal(await countOf(who), 0);
  });
});

describe('nothing accepted is lost', () => {
  it('when one delete of a batch fails, removes the deleted messages’ objects and names exactly which were deleted', async () => {
    const who = await newAccount('batch');
    const uuids: string[] = [];
    for (let index = 0; index < 4; index++) {
      // With an attachment, so the message's content is an S3 object (docs/data-model.md).
      const response = await add(
        who,
        textMessage(who, {
          scheduling: { mode: 'manual-wait' },
          attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: 'aGk=' }],
        }),
      );
      assert.equal(response.status, 200);
      uuids.push(response.body.data.message_uuid);
    }
    const failing = uuids[1] as string;
    const textKeys = new Map<string, string>();
    for (const uuid of uuids) textKeys.set(uuid, (await rawItem(uuid))?.content.key);
    // Fault injection (the only stand-in in this file): the real client against DynamoDB Local,
    // except that the DeleteItem of one message fails as a throttled store would.
    useHostEnvironment();
    const { dynamo } = await import('../../shared/platform/aws/dynamo.ts');
    const { deleteMessages } = await import('../../shared/messages/delete.ts');
    const name = 'fail-one-delete';
    dynamo().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'DeleteItemCommand' && JSON.stringify(args.input).includes(failing)) {
          throw Object.assign(new Error('Rate exceeded'), {
            name: 'ProvisionedThroughputExceededException',
            $metadata: { httpStatusCode: 400 },
          });
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    let error: any;
    try {
      await deleteMessages(uuids, who.account, false);
    } catch (caught) {
      error = caught;
    } finally {
      dynamo().middlewareStack.remove(name);
    }
    assert.equal(error?.code, 4, 'the failure is answered (503, code 4), not hidden');
    assert.deepEqual(
      error.details.map((detail: { message: string }) => detail.message),
      uuids.map((uuid) => `${uuid}: ${uuid === failing ? 'not deleted: retry' : 'deleted'}`),
    );
    for (const uuid of uuids) {
      const gone = uuid !== failing;
      assert.equal((await rawItem(uuid)) === undefined, gone, `${uuid} deleted: ${gone}`);
      assert.equal(await objectExists(textKeys.get(uuid) as string), !gone, `${uuid} objects kept: ${!gone}`);
    }
  });
});

describe('smaller findings', () => {
  it('keeps idempotency records apart when a key contains # (hashed key, account checked)', async () => {
    useHostEnvironment();
    const base = `acct-${Date.now()}`;
    // Account "<base>" with key "x#k" and account "<base>#x" with key "k" once shared one record.
    const first = await newAccountNamed(base);
    const second = await newAccountNamed(`${base}#x`);
    const one = await add(first, textMessage(first), { headers: { 'idempotency-key': 'x#k' } });
    assert.equal(one.status, 200);
    const two = await add(second, textMessage(second), { headers: { 'idempotency-key': 'k' } });
    assert.equal(two.status, 200);
    assert.notEqual(two.body.data.message_uuid, one.body.data.message_uuid);
    const stored = await getIdempotencyRecord(first.account, 'x#k', new Date());
    assert.equal(stored?.messageUuid, one.body.data.message_uuid);
    assert.equal(await getIdempotencyRecord(second.account, 'x#k', new Date()), undefined);
  });

  it('never follows a Gravatar redirect: the image it points to is not fetched', async () => {
    const who = await newAccount('grav');
    const email = `moved-${Date.now()}@example.com`;
    const hash = createHash('sha256').update(email).digest('hex');
    await setGravatar(hostInfo().gravatarControlUrl, hash, 'redirect');
    const response = await call('GET', '/avatar/get-1.0', { token: who.token, query: { email } });
    assert.equal(response.status, 200);
    const hits = await gravatarHits(hostInfo().gravatarControlUrl, hash);
    assert.equal(hits.hits, 1, 'Gravatar was asked');
    assert.equal(hits.moved_hits ?? 0, 0, 'the redirect target was never fetched');
    const image = Buffer.from(await (await fetch(response.body.data.url)).arrayBuffer());
    assert.notDeepEqual(image, fakeGravatarPng, 'a redirect counts as no Gravatar: initials instead');
  });

  it('set-algorithm answers the keys to publish, and dry_run: true in a dry run', async () => {
    const who = await newAccount('dkim');
    const dry = await call('POST', '/domain/dkim/set-algorithm-1.0', {
      token: who.token,
      body: { domain: who.domain, algorithm: 'ed25519-sha256' },
      query: { dry_run: 'true' },
    });
    assert.equal(dry.status, 200);
    assert.equal(dry.body.data.dry_run, true);
    assert.ok(Array.isArray(dry.body.data.dkim_keys));
    const real = await call('POST', '/domain/dkim/set-algorithm-1.0', {
      token: who.token,
      body: { domain: who.domain, algorithm: 'ed25519-sha256' },
    });
    assert.equal(real.status, 200);
    assert.equal(real.body.data.dry_run, undefined);
    const status = await call('GET', '/domain/dkim/status-1.0', {
      token: who.token,
      query: { domain: who.domain },
    });
    assert.deepEqual(real.body.data.dkim_keys, status.body.data.dkim_keys);
    const active = real.body.data.dkim_keys.find((key: { status: string }) => key.status === 'active');
    assert.equal(active.algorithm, 'ed25519-sha256');
    assert.match(active.dns_value, /^v=DKIM1; k=ed25519; p=/);
  });

  it('bounds a waiting message: manual-wait puts it on the due index at the 30-day horizon', async () => {
    const who = await newAccount('hold');
    const response = await add(who, textMessage(who, { scheduling: { mode: 'manual-wait' } }));
    assert.equal(response.status, 200);
    assert.equal(response.body.data.status, 'waiting');
    const item = await rawItem(response.body.data.message_uuid);
    const due = workEntryTimeOf(item);
    const expected = Date.parse(String(item?.created_at)) + 30 * 24 * 3600 * 1000;
    assert.equal(due, expected, 'the dispatcher fails it visibly when the hold ends');
  });
});

/** An account with a chosen name (tests of key layout need names with `#`). */
async function newAccountNamed(account: string): Promise<TestAccount> {
  const { registerDomain } = await import('../../shared/domains/registry.ts');
  const { mintToken, uniqueDomain } = await import('../support/host.ts');
  const domain = uniqueDomain('idem');
  await registerDomain(domain, account);
  return { account, domain, token: await mintToken({ account }), sender: `noreply@${domain}` };
}
