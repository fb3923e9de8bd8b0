import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { Webhook } from 'standardwebhooks';
import { describe, it } from 'vitest';
import type { InboundItem } from '../../shared/inbound/model/inbound.ts';
import {
  deriveChanges,
  type MessageChange,
  type MessageSnapshot,
  messageEventTypes,
} from '../../shared/messages/model/changes.ts';
import { messageSnapshotOf } from '../../shared/messages/store/message-stream.ts';
import { formatDate } from '../../shared/platform/time/format.ts';
import { hitEventOf } from '../../shared/tracking/model/hit-events.ts';
import type { HitItem } from '../../shared/tracking/store/hits.ts';
import { resolveTarget, TargetRefused } from '../../shared/webhooks/http-target.ts';
import { deriveEndpointEvents, endpointEventBody } from '../../shared/webhooks/model/endpoint-events.ts';
import { eventBody } from '../../shared/webhooks/model/events.ts';
import { inboundReceivedEvent } from '../../shared/webhooks/model/inbound-event.ts';
import {
  defaultRetrySchedule,
  nextAttemptAt,
  parseRetrySchedule,
  queueDelaySeconds,
  verdictOf,
} from '../../shared/webhooks/model/retry-schedule.ts';
import { forbiddenReason, urlProblem } from '../../shared/webhooks/model/targets.ts';
import { deliveryHeaders, signatureHeader } from '../../shared/webhooks/signing.ts';
import { webhookEventProblems } from '../support/contract.ts';

const t0 = '2026-11-23T10:00:00.000Z';
const t1 = '2026-11-23T10:00:01.000Z';
const t2 = '2026-11-23T10:00:02.000Z';

const base = (overrides: Partial<MessageSnapshot> = {}): MessageSnapshot => ({
  messageUuid: '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e',
  accountId: 'acct',
  status: 'processing',
  subject: 'Hello',
  recipients: [
    { email: 'ok@example.net', status: 'pending', updatedAt: t0 },
    { email: 'bounce@example.net', status: 'pending', updatedAt: t0 },
  ],
  history: [
    { status: 'queued', at: t0, detail: 'immediate' },
    { status: 'processing', at: t0, detail: 'send attempt 1' },
  ],
  tags: [{ name: 'category', value: 'receipt' }],
  metadata: { order_id: '4711' },
  ...overrides,
});

/** The write the sender makes when the local MTA accepted one recipient and refused the other. */
const settled = (): MessageSnapshot =>
  base({
    status: 'bounced',
    recipients: [
      { email: 'ok@example.net', status: 'delivered', detail: '250 ok', updatedAt: t1 },
      { email: 'bounce@example.net', status: 'bounced', detail: '550 5.1.1 no', updatedAt: t1 },
    ],
    history: [
      ...base().history,
      { status: 'sent', at: t1, detail: '250 ok' },
      { status: 'delivered', at: t1, recipient: 'ok@example.net' },
      { status: 'bounced', at: t1, recipient: 'bounce@example.net' },
      { status: 'bounced', at: t1 },
    ],
  });

describe('events from message changes', () => {
  it('one write: sent and delivered for the accepted recipient, bounced for the refused one', () => {
    const events = deriveChanges(base(), settled());
    assert.deepEqual(
      events.map((event) => [event.type, event.recipient?.email]),
      [
        ['message.sent', 'ok@example.net'],
        ['message.delivered', 'ok@example.net'],
        ['message.bounced', 'bounce@example.net'],
      ],
    );
    assert.equal(events[2]?.recipient?.detail, '550 5.1.1 no');
    assert.equal(events[0]?.messageStatus, 'bounced');
  });

  it('ids are deterministic: the same change twice gives the same ids; different changes differ', () => {
    const first = deriveChanges(base(), settled()).map((event) => event.id);
    const again = deriveChanges(base(), settled()).map((event) => event.id);
    assert.deepEqual(first, again);
    assert.equal(new Set(first).size, first.length);
    for (const id of first) assert.match(id, /^evt_[0-9a-f]{32}$/);
  });

  it('nothing for a write that changes no recipient (e.g. a lease renewal) or for a new message', () => {
    assert.deepEqual(
      deriveChanges(base(), base({ history: [...base().history, { status: 'processing', at: t1 }] })),
      [],
    );
    assert.deepEqual(deriveChanges(undefined, base({ status: 'queued' })), []);
  });

  it('a relay that is not the final hop: sent now, delivered later by a separate write', () => {
    const sent = base({
      status: 'sent',
      recipients: [{ email: 'ok@example.net', status: 'pending', updatedAt: t0 }],
      history: [...base().history, { status: 'sent', at: t1 }],
    });
    assert.deepEqual(
      deriveChanges(base({ recipients: sent.recipients }), sent).map((event) => event.type),
      ['message.sent'],
    );
    const delivered = {
      ...sent,
      status: 'delivered',
      recipients: [{ email: 'ok@example.net', status: 'delivered', updatedAt: t2 }],
      history: [...sent.history, { status: 'delivered', at: t2, recipient: 'ok@example.net' }],
    };
    const events = deriveChanges(sent, delivered);
    assert.deepEqual(
      events.map((event) => [event.type, event.at]),
      [['message.delivered', t2]],
    );
  });

  it('complaints and delays are history notes per recipient; each delay is its own event', () => {
    const before = settled();
    const after = {
      ...before,
      history: [
        ...before.history,
        { status: 'complaint', at: t2, recipient: 'ok@example.net', detail: 'abuse' },
        { status: 'delayed', at: t2, recipient: 'bounce@example.net' },
      ],
    };
    const events = deriveChanges(before, after);
    assert.deepEqual(
      events.map((event) => [event.type, event.recipient?.email, event.recipient?.status]),
      [
        ['message.complained', 'ok@example.net', 'complained'],
        ['message.delayed', 'bounce@example.net', 'delayed'],
      ],
    );
    const later = {
      ...after,
      history: [
        ...after.history,
        { status: 'delayed', at: '2026-11-23T11:00:00.000Z', recipient: 'bounce@example.net' },
      ],
    };
    const [second] = deriveChanges(after, later);
    assert.notEqual(second?.id, events[1]?.id);
  });

  it('failed and suppressed recipients; cancelled once per message with no recipient', () => {
    const failed = base({
      status: 'failed',
      recipients: base().recipients.map((recipient) => ({
        ...recipient,
        status: 'failed',
        detail: 'gave up',
      })),
    });
    assert.deepEqual(
      deriveChanges(base(), failed).map((event) => event.type),
      ['message.failed', 'message.failed'],
    );
    const suppressed = base({
      recipients: [{ email: 'ok@example.net', status: 'suppressed', updatedAt: t1 }],
    });
    assert.deepEqual(
      deriveChanges(base({ recipients: [{ email: 'ok@example.net', status: 'pending' }] }), suppressed).map(
        (event) => event.type,
      ),
      ['message.suppressed'],
    );
    const waiting = base({ status: 'waiting' });
    const cancelled = base({
      status: 'cancelled',
      history: [...waiting.history, { status: 'cancelled', at: t2, detail: 'manual-cancel' }],
    });
    const events = deriveChanges(waiting, cancelled);
    assert.deepEqual(
      events.map((event) => [event.type, event.recipient, event.at]),
      [['message.cancelled', null, t2]],
    );
    assert.deepEqual(deriveChanges(cancelled, cancelled), []);
  });

  it('the body has exactly the documented shape', () => {
    const [event] = deriveChanges(base(), settled());
    const body = JSON.parse(eventBody(event as never, (iso) => `${iso.slice(0, 23)}+00:00`));
    assert.deepEqual(Object.keys(body), ['type', 'timestamp', 'data']);
    assert.deepEqual(Object.keys(body.data), [
      'message_uuid',
      'status',
      'recipient',
      'subject',
      'tags',
      'metadata',
      'stream',
    ]);
    assert.equal(body.data.stream, 'transactional');
    assert.equal(body.timestamp, '2026-11-23T10:00:01.000+00:00');
    assert.deepEqual(body.data.recipient, { email: 'ok@example.net', status: 'sent', detail: '250 ok' });
  });

  it('every event of a message carries its tags and metadata; none are empty lists and maps', () => {
    const events = deriveChanges(base(), settled());
    assert.ok(events.length >= 3);
    for (const event of events) {
      const body = JSON.parse(eventBody(event, (iso) => iso));
      assert.deepEqual(body.data.tags, [{ name: 'category', value: 'receipt' }]);
      assert.deepEqual(body.data.metadata, { order_id: '4711' });
    }
    const plain = (snapshot: MessageSnapshot) => ({ ...snapshot, tags: [], metadata: {} });
    const [bare] = deriveChanges(plain(base()), plain(settled()));
    const body = JSON.parse(eventBody(bare as never, (iso) => iso));
    assert.deepEqual([body.data.tags, body.data.metadata], [[], {}]);
  });

  it('the stream mapping reads message items only, and empty maps survive', () => {
    const item = {
      pk: 'MESSAGE#0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e',
      sk: 'MESSAGE',
      message_uuid: '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e',
      account_id: 'acct',
      status: 'sent',
      subject: 'Hi',
      headers: {},
      recipients: [{ email: 'a@example.net', status: 'pending', kind: 'to', updated_at: t0 }],
      history: [{ status: 'sent', at: t1 }],
    };
    const snapshot = messageSnapshotOf(marshall(item) as never);
    assert.equal(snapshot?.status, 'sent');
    assert.deepEqual(snapshot?.recipients, [{ email: 'a@example.net', status: 'pending', updatedAt: t0 }]);
    assert.deepEqual([snapshot?.tags, snapshot?.metadata], [[], {}], 'a message stored without labels');
    const labelled = messageSnapshotOf(
      marshall({ ...item, tags: [{ name: 'flow', value: 'reset' }], metadata: { user: 'u-1' } }) as never,
    );
    assert.deepEqual(
      [labelled?.tags, labelled?.metadata],
      [[{ name: 'flow', value: 'reset' }], { user: 'u-1' }],
    );
    assert.equal(messageSnapshotOf(marshall({ ...item, sk: 'DKIM#x' }) as never), undefined);
    assert.equal(messageSnapshotOf(marshall({ pk: 'DOMAIN#x', sk: 'DOMAIN' }) as never), undefined);
    assert.equal(messageSnapshotOf(undefined), undefined);
  });
});

describe('the bodies match the published schema (MessageChange in docs/openapi.json)', () => {
  /** Every message event the rules make, from writes that produce each type. */
  function everyMessageEvent(): MessageChange[] {
    const before = settled();
    const noted = {
      ...before,
      history: [
        ...before.history,
        { status: 'complaint', at: t2, recipient: 'ok@example.net', detail: 'abuse' },
        { status: 'delayed', at: t2, recipient: 'bounce@example.net' },
        // A note about an address that is not a recipient (any more) still makes a full event.
        { status: 'delayed', at: t2, recipient: 'gone@example.net' },
      ],
    };
    // A broadcast's one-click unsubscribe: a note about its recipient (docs/streams.md).
    const unsubscribed = {
      ...before,
      stream: 'broadcast' as const,
      history: [
        ...before.history,
        {
          status: 'unsubscribed',
          at: t2,
          recipient: 'ok@example.net',
          detail: 'ok@example.net: One-click unsubscribe (RFC 8058)',
        },
      ],
    };
    const failed = base({
      status: 'failed',
      recipients: base().recipients.map((recipient) => ({ ...recipient, status: 'failed' })),
    });
    const suppressed = base({
      status: 'suppressed',
      subject: '',
      tags: [],
      metadata: {},
      recipients: [{ email: 'ok@example.net', status: 'suppressed', updatedAt: t1 }],
    });
    const waiting = base({ status: 'waiting' });
    const cancelled = base({
      status: 'cancelled',
      history: [...waiting.history, { status: 'cancelled', at: t2, detail: 'manual-cancel' }],
    });
    return [
      ...deriveChanges(base(), settled()),
      ...deriveChanges(before, noted),
      ...deriveChanges({ ...before, stream: 'broadcast' as const }, unsubscribed),
      ...deriveChanges(base(), failed),
      ...deriveChanges(base({ recipients: [{ email: 'ok@example.net', status: 'pending' }] }), suppressed),
      ...deriveChanges(waiting, cancelled),
      ...trackingEvents(),
    ];
  }

  /** An open (a machine's, the first) and a repeated click, as the tracking records' stream makes them. */
  function trackingEvents(): MessageChange[] {
    const hit = (kind: HitItem['kind'], hits: number, last: Partial<HitItem['last']> = {}): HitItem => ({
      message_uuid: '2a52b27c-0980-473f-96bc-aa7afca8d390',
      account_id: 'acct',
      kind,
      recipient: 'ok@example.net',
      recipient_index: 0,
      tenant: 'example.test',
      status: 'delivered',
      subject: '',
      tags: [],
      metadata: {},
      hits,
      first_at: t1,
      last: {
        at: t2,
        user_agent: 'Mozilla/5.0',
        client_address: '17.58.0.0/24',
        machine_open: true,
        ...last,
      },
    });
    return [
      hitEventOf(undefined, hit('open', 1)),
      hitEventOf(
        hit('click', 1),
        hit('click', 2, {
          machine_open: false,
          client_address: null,
          link: 'https://a.example/',
          link_index: 3,
        }),
      ),
    ];
  }

  it('every message event type, with and without labels, a detail or a subject', () => {
    const events = everyMessageEvent();
    assert.deepEqual([...new Set(events.map((event) => event.type))].sort(), [...messageEventTypes].sort());
    for (const event of events) {
      for (const zone of ['UTC', 'Europe/Berlin'])
        assert.deepEqual(
          webhookEventProblems(eventBody(event, (iso) => formatDate(iso, zone))),
          [],
          event.type,
        );
    }
  });

  it('webhook.disabled', () => {
    const [event] = deriveEndpointEvents(
      {
        accountId: 'acct',
        webhookId: 'wh_5f0c6a1e2b3d4c5e6f708192',
        url: 'https://a.example/h',
        enabled: true,
      },
      {
        accountId: 'acct',
        webhookId: 'wh_5f0c6a1e2b3d4c5e6f708192',
        url: 'https://a.example/h',
        enabled: false,
        disabledAt: t1,
        disabledReason: 'The receiver answered 410 Gone',
      },
    );
    assert.ok(event);
    assert.deepEqual(webhookEventProblems(endpointEventBody(event, formatDate)), []);
  });

  it('inbound.received, parsed and unparsable', () => {
    const item: InboundItem = {
      inbound_uuid: '5d0f3c2a-9b1e-8c4d-a2f0-6e7d8c9b0a1f',
      account_id: 'acct',
      domain: 'example.test',
      recipient: 'support+ticket-42@example.test',
      received_at: t0,
      ses_message_id: 'ses-1',
      from: { email: 'ada@example.org', name: 'Ada' },
      to: [{ email: 'support+ticket-42@example.test' }],
      cc: [{ email: 'grace@example.org', name: 'Grace' }],
      subject: 'Re: Your order 42',
      message_id: '<a@mail.example.org>',
      in_reply_to: '<b@example.test>',
      reply_to_message_uuid: '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e',
      mailbox_hash: 'ticket-42',
      auth: { spf: 'pass', dkim: 'fail', dmarc: 'none' },
      spam: { verdict: 'not_scanned' },
      attachments: [{ filename: 'receipt.pdf', content_type: 'application/pdf', size: 20411, key: 'k' }],
      objects: { raw: 'raw', content: 'content' },
      size: 48213,
      expires_at: 0,
    };
    const unparsable: InboundItem = {
      inbound_uuid: item.inbound_uuid,
      account_id: 'acct',
      domain: 'example.test',
      recipient: 'support@example.test',
      received_at: t0,
      ses_message_id: 'ses-2',
      auth: { spf: 'none', dkim: 'none', dmarc: 'none' },
      spam: { verdict: 'not_scanned' },
      parse_error: 'The header section is not RFC 5322',
      objects: { raw: 'raw' },
      size: 12,
      expires_at: 0,
    };
    for (const received of [item, unparsable])
      assert.deepEqual(webhookEventProblems(inboundReceivedEvent(received).body), []);
  });
});

describe('retry schedule and verdicts', () => {
  it('10 attempts over about 75 hours by default', () => {
    assert.equal(defaultRetrySchedule.length + 1, 10);
    const hours = defaultRetrySchedule.reduce((sum, seconds) => sum + seconds, 0) / 3600;
    assert.ok(hours > 74 && hours < 76, String(hours));
    assert.deepEqual(parseRetrySchedule(undefined), defaultRetrySchedule);
    assert.deepEqual(parseRetrySchedule(' 1, 2 ,3'), [1, 2, 3]);
    assert.throws(() => parseRetrySchedule('1,x'), /WEBHOOK_RETRY_SCHEDULE/);
    assert.throws(() => parseRetrySchedule('-1'), /WEBHOOK_RETRY_SCHEDULE/);
  });

  it('next attempt after each failure; none after the last', () => {
    const now = 1_000_000;
    assert.equal(nextAttemptAt(1, now, defaultRetrySchedule), now + 5_000);
    assert.equal(nextAttemptAt(2, now, defaultRetrySchedule), now + 300_000);
    assert.equal(nextAttemptAt(9, now, defaultRetrySchedule), now + 86_400_000);
    assert.equal(nextAttemptAt(10, now, defaultRetrySchedule), undefined);
  });

  it('SQS delays are capped at 15 minutes; the rest is waited by re-queueing', () => {
    assert.equal(queueDelaySeconds(5_000, 0), 5);
    assert.equal(queueDelaySeconds(7_200_000, 0), 900);
    assert.equal(queueDelaySeconds(0, 10), 0);
  });

  it('2xx delivered, 410 gone, everything else (3xx, 4xx, 5xx, no answer) retried', () => {
    for (const code of [200, 201, 204, 299]) assert.equal(verdictOf(code), 'delivered');
    assert.equal(verdictOf(410), 'gone');
    for (const code of [301, 302, 307, 400, 404, 429, 500, 503, undefined])
      assert.equal(verdictOf(code), 'retry');
  });
});

describe('target rule (SSRF)', () => {
  it('refuses loopback, private, link-local, metadata and other non-public addresses', () => {
    const refused: Array<[string, RegExp]> = [
      ['127.0.0.1', /loopback/],
      ['127.8.9.10', /loopback/],
      ['::1', /loopback/],
      ['::ffff:127.0.0.1', /loopback/],
      ['10.1.2.3', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.255', /private/],
      ['192.168.1.1', /private/],
      ['fd12:3456::1', /private/],
      ['169.254.169.254', /metadata/],
      ['fd00:ec2::254', /metadata/],
      ['169.254.10.10', /link-local/],
      ['fe80::1', /link-local/],
      ['0.0.0.0', /non-public/],
      ['100.64.0.1', /non-public/],
      ['224.0.0.1', /non-public/],
      ['::', /non-public/],
    ];
    for (const [address, reason] of refused)
      assert.match(forbiddenReason(address) ?? 'allowed', reason, address);
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(forbiddenReason(address), undefined, address);
    }
  });

  it('URLs: http(s) only, https on AWS, no credentials, IP literals checked unless private targets are allowed', () => {
    const aws = { requireHttps: true, allowPrivate: false };
    const local = { requireHttps: false, allowPrivate: true };
    assert.equal(urlProblem('https://hooks.example.com/x', aws), undefined);
    assert.match(urlProblem('http://hooks.example.com/x', aws) ?? '', /https/);
    assert.match(urlProblem('ftp://hooks.example.com/x', local) ?? '', /http/);
    assert.match(urlProblem('https://user:pw@hooks.example.com/', aws) ?? '', /credentials/);
    assert.match(urlProblem('https://127.0.0.1/', aws) ?? '', /loopback/);
    assert.match(urlProblem('https://[::1]:8443/', aws) ?? '', /loopback/);
    assert.match(urlProblem('https://169.254.169.254/latest', aws) ?? '', /metadata/);
    assert.equal(urlProblem('http://127.0.0.1:8080/hook', local), undefined);
    assert.match(urlProblem('not a url', local) ?? '', /absolute/);
  });

  it('resolves the name itself and refuses if any address is forbidden; the switch lifts the rule', async () => {
    const off = { requireHttps: false, allowPrivate: false };
    const on = { requireHttps: false, allowPrivate: true };
    const mixed = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ];
    await assert.rejects(
      resolveTarget(new URL('http://hooks.example.com/'), off, mixed),
      (error: unknown) => {
        assert.ok(error instanceof TargetRefused);
        // Refused without naming the address or its range: what a name resolves to is not the caller's to learn.
        assert.equal(error.message, 'Target refused: hooks.example.com resolves to a non-public address');
        return true;
      },
    );
    assert.deepEqual(await resolveTarget(new URL('http://hooks.example.com/'), on, mixed), {
      address: '93.184.216.34',
      family: 4,
    });
    const publicOnly = async () => [{ address: '93.184.216.34', family: 4 }];
    assert.equal(
      (await resolveTarget(new URL('http://hooks.example.com/'), off, publicOnly)).address,
      '93.184.216.34',
    );
    // The real resolver: localhost is loopback.
    await assert.rejects(
      resolveTarget(new URL('http://localhost:9/'), off),
      /localhost resolves to a non-public address/,
    );
    await assert.rejects(
      resolveTarget(new URL('http://nowhere.invalid/'), off, async () => {
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      }),
      /does not resolve/,
    );
  });
});

describe('signing (Standard Webhooks v1)', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const previous = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  const body = '{"type":"message.delivered"}';
  const at = new Date('2026-11-23T10:00:00Z');

  it('v1 signature = base64 HMAC-SHA256 of "id.timestamp.body" with the decoded secret', () => {
    const header = signatureHeader([secret], 'evt_1', at, body);
    const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
      .update(`evt_1.${Math.floor(at.getTime() / 1000)}.${body}`)
      .digest('base64');
    assert.equal(header, `v1,${expected}`);
  });

  it('after a rotation two space-separated signatures; each secret verifies alone', () => {
    const headers = deliveryHeaders([secret, previous], 'evt_2', new Date(), body);
    assert.equal(headers['webhook-signature']?.split(' ').length, 2);
    assert.equal(headers['content-type'], 'application/json');
    for (const key of [secret, previous]) assert.doesNotThrow(() => new Webhook(key).verify(body, headers));
    const stranger = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    assert.throws(() => new Webhook(stranger).verify(body, headers));
  });
});
