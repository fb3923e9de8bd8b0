import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { headerValue } from '../../shared/delivery/mail/compose.ts';
import {
  addMessage,
  outboxEml,
  sendingDomain,
  smtpTransactions,
  waitForStatus,
} from '../support/delivery.ts';
import { call, useHostEnvironment } from '../support/host.ts';
import { statsOf, waitForTotals } from '../support/stats.ts';
import { dkimpyVerdicts, pathOf, postOneClick, unsubscribeUrlOf } from '../support/streams.ts';
import { lookup } from '../support/suppressions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

useHostEnvironment();

const final = ['delivered', 'bounced', 'failed', 'suppressed'];
const recipient = () => `reader-${randomUUID().slice(0, 8)}@example.net`;

async function sendBroadcast(
  who: { token: string; domain: string },
  to: string,
  content: Record<string, unknown> = {
    kind: 'mixed',
    text: 'This week: news.',
    html: '<p>This week: news.</p>',
  },
) {
  const { uuid } = await addMessage(who.token, {
    message_sender: `news@${who.domain}`,
    to: [to],
    subject: 'Weekly news',
    content,
    stream: 'broadcast',
    list_id: 'Weekly news <weekly.news.example.com>',
  });
  return waitForStatus(who.token, uuid, final);
}

async function sendTransactional(who: { token: string; domain: string }, to: string) {
  const { uuid } = await addMessage(who.token, {
    message_sender: `orders@${who.domain}`,
    to: [to],
    subject: 'Your receipt',
    content: { kind: 'text_only', text: 'Thanks for your order.' },
  });
  return waitForStatus(who.token, uuid, final);
}

const eml = (uuid: string): Buffer => {
  const raw = outboxEml(uuid);
  if (raw === undefined) throw new Error(`no delivered message ${uuid}`);
  return raw;
};

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  assert.deepEqual(receiver.contractProblems, []);
});

describe('broadcast streams and one-click unsubscribe', () => {
  it('an unsubscribe is a recipient.unsubscribed webhook event and an unsubscribed count, by stream', async () => {
    const who = await sendingDomain('rsa-sha256');
    const path = `/streams-${who.account}`;
    const hook = await call('POST', '/webhook/add-1.0', {
      token: who.token,
      body: { url: `${receiver.url}${path}`, events: ['recipient.unsubscribed', 'message.delivered'] },
    });
    assert.equal(hook.status, 200, hook.text);
    const address = recipient();
    const message = await sendBroadcast(who, address);
    await sendTransactional(who, recipient());
    assert.equal((await postOneClick(unsubscribeUrlOf(eml(message.message_uuid)))).status, 200);

    // The unsubscribe and both deliveries (the transactional one may come last).
    const received = await receiver.waitFor((all) => {
      const mine = all.filter((request) => request.path === path);
      return (
        mine.some((request) => request.body.includes('recipient.unsubscribed')) &&
        mine.filter((request) => request.body.includes('message.delivered')).length >= 2
      );
    });
    const events = received
      .filter((request) => request.path === path)
      .map((request) => JSON.parse(request.body));
    const unsubscribed = events.find((event) => event.type === 'recipient.unsubscribed');
    assert.equal(unsubscribed.data.message_uuid, message.message_uuid);
    assert.equal(unsubscribed.data.recipient.email, address);
    assert.equal(unsubscribed.data.recipient.status, 'unsubscribed');
    assert.equal(unsubscribed.data.stream, 'broadcast');
    const delivered = events.filter((event) => event.type === 'message.delivered');
    assert.deepEqual(delivered.map((event) => event.data.stream).sort(), ['broadcast', 'transactional']);

    const range = {
      date_from: new Date(Date.now() - 3_600_000).toISOString(),
      date_to: new Date(Date.now() + 3_600_000).toISOString(),
      granularity: 'day',
    };
    await waitForTotals(who.token, range, { accepted: 2, delivered: 2, unsubscribed: 1 });
    const byStream = await statsOf(who.token, { ...range, group_by: 'stream' });
    const totalOf = (key: string, counter: string) =>
      byStream.series
        .find((series: { key: string }) => series.key === key)
        ?.points.reduce((sum: number, point: Record<string, number>) => sum + (point[counter] ?? 0), 0);
    assert.equal(totalOf('broadcast', 'unsubscribed'), 1);
    assert.equal(totalOf('broadcast', 'delivered'), 1);
    assert.equal(totalOf('transactional', 'delivered'), 1);
    assert.equal(byStream.totals.unsubscribed, 1);
  });

  it('a delivered broadcast carries the RFC 8058 headers and List-Id, every DKIM signature covers them', async () => {
    const who = await sendingDomain('ed25519-sha256');
    const message = await sendBroadcast(who, recipient());
    assert.equal(message.status, 'delivered', JSON.stringify(message.status_history));
    assert.equal(message.stream, 'broadcast');
    assert.equal(message.list_id, 'Weekly news <weekly.news.example.com>');
    const raw = eml(message.message_uuid);
    const url = unsubscribeUrlOf(raw);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/unsubscribe\/[A-Za-z0-9_-]{40,}$/);
    assert.equal(headerValue(raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
    assert.equal(headerValue(raw, 'List-Id'), 'Weekly news <weekly.news.example.com>');
    // The token is opaque: the address appears nowhere in it.
    assert.equal(url.includes('example.net'), false);
    const verdicts = dkimpyVerdicts(raw);
    assert.equal(verdicts.length >= 2, true, 'an Ed25519 domain signs with its RSA companion too');
    for (const verdict of verdicts) {
      assert.equal(verdict.verified, true, JSON.stringify(verdicts));
      for (const field of ['list-unsubscribe', 'list-unsubscribe-post', 'list-id'])
        assert.equal(verdict.h.includes(field), true, `${field} in h= of ${verdict.domain}`);
    }
    // The footer: both parts show the link, since the body had none.
    const text = raw.toString('utf8');
    assert.match(text, /Unsubscribe/);
  });

  it('POSTing the URL of the delivered .eml as Gmail does suppresses for broadcast only; GET suppresses nobody', async () => {
    const who = await sendingDomain('rsa-sha256');
    const address = recipient();
    const first = await sendBroadcast(who, address);
    const url = unsubscribeUrlOf(eml(first.message_uuid));

    const page = await call('GET', pathOf(url));
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.equal(/https?:\/\//.test(csp), false, 'no third-party origin');
    assert.match(page.text, /List-Unsubscribe/);
    assert.equal(await lookup(who, address), null, 'a GET alone suppresses nobody');

    const posted = await postOneClick(url);
    assert.equal(posted.status, 200, posted.text);
    assert.equal(posted.text, '');
    assert.equal(posted.headers.get('location'), null);
    assert.equal(posted.headers.get('set-cookie'), null);
    const entry = await lookup(who, address);
    assert.equal(entry?.reason, 'unsubscribed');
    assert.equal(entry?.stream, 'broadcast');
    assert.equal(entry?.message_uuid, first.message_uuid);

    // Idempotent: the same POST again changes nothing.
    const again = await postOneClick(url);
    assert.equal(again.status, 200);
    assert.equal((await lookup(who, address))?.created_at, entry?.created_at);

    // The message notes it once: its recipient event.
    const noted = await waitForStatus(who.token, first.message_uuid, ['delivered']);
    const events = noted.recipients[0].events.map((event: { status: string }) => event.status);
    assert.deepEqual(
      events.filter((status: string) => status === 'unsubscribed'),
      ['unsubscribed'],
    );

    // A password reset still reaches them; the next newsletter does not.
    const receipt = await sendTransactional(who, address);
    assert.equal(receipt.status, 'delivered', JSON.stringify(receipt.status_history));
    const next = await sendBroadcast(who, address);
    assert.equal(next.status, 'suppressed', JSON.stringify(next.status_history));
    assert.deepEqual(smtpTransactions(next.message_uuid), []);
    assert.match(next.recipients[0].detail, /unsubscribed from broadcasts/);

    // The suppression routes show and filter by stream; removing the entry re-subscribes.
    const listed = await call('POST', '/suppression/query-1.0', {
      token: who.token,
      body: { filters: { stream: 'broadcast' } },
    });
    assert.deepEqual(
      listed.body.data.suppressions.map((item: { email: string; stream: string }) => [
        item.email,
        item.stream,
      ]),
      [[address, 'broadcast']],
    );
    const all = await call('POST', '/suppression/query-1.0', {
      token: who.token,
      body: { filters: { stream: 'all' } },
    });
    assert.deepEqual(all.body.data.suppressions, []);
    const removed = await call('POST', '/suppression/delete-1.0', {
      token: who.token,
      body: { emails: [address] },
    });
    assert.deepEqual(removed.body.data.deleted, [address]);
    const back = await sendBroadcast(who, address);
    assert.equal(back.status, 'delivered');

    // The stream is a query filter.
    const broadcasts = await call('POST', '/message/query-1.0', {
      token: who.token,
      body: { filters: { stream: 'broadcast' } },
    });
    const uuids = broadcasts.body.data.messages.map((item: { message_uuid: string }) => item.message_uuid);
    assert.deepEqual(uuids.sort(), [first.message_uuid, next.message_uuid, back.message_uuid].sort());
    assert.equal(uuids.includes(receipt.message_uuid), false);
  });

  it('tampered, foreign and malformed tokens are 112 and change nothing; a body that is not one-click is 107', async () => {
    const who = await sendingDomain('rsa-sha256');
    const address = recipient();
    const message = await sendBroadcast(who, address);
    const url = unsubscribeUrlOf(eml(message.message_uuid));
    const token = pathOf(url).split('/').at(-1) as string;
    const flipped = `${token.slice(0, 30)}${token[30] === 'A' ? 'B' : 'A'}${token.slice(31)}`;
    for (const bad of [flipped, `${token}x`, 'AQ', randomUUID()]) {
      const posted = await postOneClick(`http://x/unsubscribe/${bad}`);
      assert.equal(posted.status, 404, bad);
      assert.equal(posted.body.error.code, 112);
      const page = await call('GET', `/unsubscribe/${bad}`);
      assert.equal(page.status, 404);
    }
    const wrongBody = await postOneClick(url, 'List-Unsubscribe=Please');
    assert.equal(wrongBody.status, 406);
    assert.equal(wrongBody.body.error.code, 107);
    assert.equal(await lookup(who, address), null);
  });

  it('the footer appears when the body has no link, not when it has {{{unsubscribe_url}}}', async () => {
    const who = await sendingDomain('rsa-sha256');
    const own = await sendBroadcast(who, recipient(), {
      kind: 'mixed',
      text: 'Leave: {{{unsubscribe_url}}}',
      html: '<p><a href="{{{unsubscribe_url}}}">Leave this list</a></p>',
    });
    const raw = eml(own.message_uuid).toString('utf8');
    const url = unsubscribeUrlOf(eml(own.message_uuid));
    assert.equal(raw.includes('{{{unsubscribe_url}}}'), false);
    assert.equal(raw.includes('>Unsubscribe</a>'), false, 'no footer');
    const decoded = raw.replace(/=\r\n/g, '').replace(/=3D/g, '=');
    assert.equal(decoded.includes(url), true, 'the link is where the body put it');

    const plain = await sendBroadcast(who, recipient(), { kind: 'text_only', text: 'News without a link.' });
    const footer = eml(plain.message_uuid).toString('utf8').replace(/=\r\n/g, '');
    assert.match(footer, /Unsubscribe: http:\/\/127\.0\.0\.1:\d+\/unsubscribe\//);
  });

  it('bad input is 107 with details; batch items carry their stream; transactional mail gets no list headers', async () => {
    const who = await sendingDomain('rsa-sha256');
    const base = {
      message_sender: `news@${who.domain}`,
      subject: 'x',
      content: { kind: 'text_only', text: 'x' },
    };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, stream: 'broadcast', to: ['a@example.net', 'b@example.net'] }, 'to'],
      [{ ...base, stream: 'broadcast', to: ['a@example.net'], cc: ['c@example.net'] }, 'cc'],
      [{ ...base, stream: 'broadcast', to: ['a@example.net'], list_id: 'no angle brackets' }, 'list_id'],
      [{ ...base, to: ['a@example.net'], list_id: 'News <news.example.com>' }, 'list_id'],
      [
        { ...base, to: ['a@example.net'], content: { kind: 'text_only', text: 'Bye {{{unsubscribe_url}}}' } },
        'content',
      ],
      [{ ...base, stream: 'newsletter', to: ['a@example.net'] }, 'stream'],
    ];
    for (const [body, field] of cases) {
      const response = await call('POST', '/message/add-1.0', { token: who.token, body });
      assert.equal(response.status, 406, JSON.stringify(body));
      assert.equal(response.body.error.code, 107);
      assert.equal(
        response.body.error.details.some((detail: { field: string }) => detail.field.startsWith(field)),
        true,
        `${field}: ${response.text}`,
      );
    }

    const batch = await call('POST', '/message/batch-1.0', {
      token: who.token,
      body: {
        messages: [
          { ...base, to: ['one@example.net'], stream: 'broadcast' },
          { ...base, to: ['two@example.net'] },
        ],
      },
    });
    assert.equal(batch.status, 200, batch.text);
    const [broadcast, transactional] = await Promise.all(
      batch.body.data.results.map((result: { message_uuid: string }) =>
        waitForStatus(who.token, result.message_uuid, final),
      ),
    );
    assert.equal(broadcast.stream, 'broadcast');
    assert.equal(transactional.stream, 'transactional');
    unsubscribeUrlOf(eml(broadcast.message_uuid));
    const plain = eml(transactional.message_uuid);
    assert.equal(headerValue(plain, 'List-Unsubscribe'), undefined);
    assert.equal(headerValue(plain, 'List-Unsubscribe-Post'), undefined);
  });
});
