import assert from 'node:assert/strict';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, test, vi } from 'vitest';
import {
  addMessage,
  outboxEml,
  queryMessage,
  type SendingDomain,
  sendingDomain,
  smtpTransactions,
  verifyDkim,
  waitForStatus,
} from '../support/delivery.ts';
import { call, hostInfo, useHostEnvironment } from '../support/host.ts';
import { waitForTotals } from '../support/stats.ts';
import {
  afterResponsesSettled,
  applePrivacyProxy,
  desktopClient,
  setDomainTracking,
  trackingUrls,
  visit,
} from '../support/tracking.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Open and click tracking (docs/tracking.md) end to end: the sender rewrites the HTML part at
 * compose time, the recipients' MTA (the embedded SMTP server) gets a DKIM-valid message, and the
 * public routes answer the pixel and the redirects, recording opens and clicks that show in the
 * query by uuid and in webhooks.
 */
useHostEnvironment();

const settled = ['delivered', 'bounced', 'failed'];
let sending: SendingDomain;
let receiver: WebhookReceiver;

const base = () => hostInfo().url.replace(/\/$/, '');

const links = {
  first: 'https://shop.example/orders/4711?utm=mail&lang=en',
  second: 'http://status.example/',
};

const htmlWithLinks = () =>
  [
    '<!DOCTYPE html><html><head><title>Order</title></head><body>',
    `<p><a href="https://shop.example/orders/4711?utm=mail&amp;lang=en">Your order</a></p>`,
    `<p><a class="plain" href='http://status.example/'>Status</a></p>`,
    '<p><a href="mailto:help@shop.example">Mail us</a> <a href="tel:+15550100">Call</a> <a href="#top">Top</a></p>',
    '<p><a data-svc-track="off" href="https://private.example/reset?code=1">Reset</a></p>',
    `<p><a href="${base()}/unsubscribe/abc123">Unsubscribe</a></p>`,
    '</body></html>',
  ].join('\n');

async function deliveredHtml(uuid: string): Promise<{ eml: Buffer; html: string }> {
  await waitForStatus(sending.token, uuid, settled);
  const eml = outboxEml(uuid);
  assert.ok(eml, 'delivered to the outbox');
  const parsed = await PostalMime.parse(eml);
  return { eml, html: parsed.html ?? '' };
}

beforeAll(async () => {
  sending = await sendingDomain('rsa-sha256');
  receiver = await startWebhookReceiver();
  const added = await call('POST', '/webhook/add-1.0', {
    token: sending.token,
    body: { url: `${receiver.url}/tracking`, events: ['message.opened', 'message.clicked'] },
  });
  assert.equal(added.status, 200, added.text);
});

afterAll(async () => {
  await receiver?.close();
});

describe('open and click tracking', () => {
  test('off by default: no pixel, every link as written', async () => {
    const { uuid } = await addMessage(sending.token, {
      message_sender: `orders@${sending.domain}`,
      to: ['reader@example.net'],
      subject: 'Untracked',
      content: { kind: 'html_only', html: htmlWithLinks() },
    });
    const { eml, html } = await deliveredHtml(uuid);
    assert.deepEqual(trackingUrls(eml.toString('utf8'), 'o'), []);
    assert.deepEqual(trackingUrls(html, 'c'), []);
    // The part as given, with the line break the composer ends every part with.
    assert.equal(html, `${htmlWithLinks()}\n`, 'the HTML part is byte for byte what was given');
    assert.equal((await queryMessage(sending.token, uuid)).tracking.opens, undefined);
  });

  test('on per message: links rewritten, DKIM valid, each redirect to exactly its original, events recorded', async () => {
    const { uuid } = await addMessage(sending.token, {
      message_sender: `orders@${sending.domain}`,
      to: ['ada@example.net'],
      subject: 'Tracked',
      content: { kind: 'html_only', html: htmlWithLinks() },
      tracking: { opens: true, clicks: true },
    });
    const { eml, html } = await deliveredHtml(uuid);
    const dkim = await verifyDkim(eml);
    assert.equal(dkim[0]?.result, 'pass', JSON.stringify(dkim));

    const clicks = trackingUrls(html, 'c');
    assert.equal(clicks.length, 2, html);
    const opens = trackingUrls(html, 'o');
    assert.equal(opens.length, 1);
    assert.ok(html.indexOf(opens[0] as string) < html.indexOf('</body>'), 'the pixel is inside the body');
    // Left alone: mailto, tel, the anchor, the marked link (its marker removed) and the unsubscribe URL.
    for (const kept of [
      'href="mailto:help@shop.example"',
      'href="tel:+15550100"',
      'href="#top"',
      '<a href="https://private.example/reset?code=1">',
      `href="${base()}/unsubscribe/abc123"`,
    ])
      assert.ok(html.includes(kept), kept);
    assert.doesNotMatch(html, /data-svc-track/);

    // Each hit is recorded after its answer: settled one by one, so the last click is the last one made.
    const first = await visit(clicks[0] as string, desktopClient);
    assert.equal(first.status, 302);
    assert.equal(first.headers.get('location'), links.first);
    await afterResponsesSettled();
    const second = await visit(clicks[1] as string, desktopClient);
    assert.equal(second.status, 302);
    assert.equal(second.headers.get('location'), links.second);
    await afterResponsesSettled();
    await visit(clicks[0] as string, desktopClient);

    const pixel = await visit(opens[0] as string, desktopClient);
    assert.equal(pixel.status, 200);
    assert.equal(pixel.headers.get('content-type'), 'image/gif');
    assert.equal(pixel.body.subarray(0, 6).toString('latin1'), 'GIF89a');
    await afterResponsesSettled();

    const message = await queryMessage(sending.token, uuid);
    assert.deepEqual(message.tracking, { opens: true, clicks: true });
    const tracked = message.recipients[0].tracking;
    assert.equal(tracked.opens, 1);
    assert.equal(tracked.clicks, 3);
    assert.equal(tracked.last_click.link, links.first);
    assert.equal(tracked.last_click.link_index, 0);
    assert.equal(tracked.last_open.client_address, '127.0.0.0/24', 'truncated to /24');
    assert.equal(tracked.last_open.machine_open, false);
    assert.ok(tracked.first_human_open_at);

    const received = await receiver.waitFor(
      (all) => all.filter((entry) => entry.body.includes(uuid)).length >= 4,
      60_000,
    );
    const bodies = received
      .filter((entry) => entry.body.includes(uuid))
      .map((entry) => JSON.parse(entry.body));
    const opened = bodies.filter((body) => body.type === 'message.opened');
    const clicked = bodies.filter((body) => body.type === 'message.clicked');
    assert.equal(opened.length, 1);
    assert.equal(opened[0].data.first, true);
    assert.equal(opened[0].data.user_agent, desktopClient);
    assert.equal(opened[0].data.recipient.email, 'ada@example.net');
    assert.equal(clicked.length, 3);
    assert.deepEqual(clicked.map((body) => body.data.first).sort(), [false, false, true]);
    assert.ok(clicked.some((body) => body.data.link === links.second && body.data.link_index === 1));
    assert.deepEqual(receiver.contractProblems, []);
  });

  test('an open from Apple Mail Privacy Protection is a machine open', async () => {
    const { uuid } = await addMessage(sending.token, {
      message_sender: `orders@${sending.domain}`,
      to: ['grace@example.net'],
      content: { kind: 'html_only', html: '<p>Hello</p>' },
      tracking: { opens: true },
    });
    const { html } = await deliveredHtml(uuid);
    const pixel = await visit(trackingUrls(html, 'o')[0] as string, applePrivacyProxy);
    assert.equal(pixel.status, 200);
    await afterResponsesSettled();
    const tracked = (await queryMessage(sending.token, uuid)).recipients[0].tracking;
    assert.equal(tracked.opens, 1);
    assert.equal(tracked.last_open.machine_open, true);
    assert.equal(tracked.first_human_open_at, undefined);
  });

  test('tampered tokens and tokens of other links never redirect and record nothing', async () => {
    const { uuid } = await addMessage(sending.token, {
      message_sender: `orders@${sending.domain}`,
      to: ['lin@example.net'],
      content: { kind: 'html_only', html: htmlWithLinks() },
      tracking: { opens: true, clicks: true },
    });
    const { html } = await deliveredHtml(uuid);
    const click = trackingUrls(html, 'c')[0] as string;
    const open = trackingUrls(html, 'o')[0] as string;
    const flip = (url: string) => {
      const at = url.length - 5;
      return url.slice(0, at) + (url[at] === 'A' ? 'B' : 'A') + url.slice(at + 1);
    };
    for (const bad of [
      flip(click),
      `${base()}/t/c/AAAA`,
      `${base()}/t/c/${'x'.repeat(3000)}`,
      open.replace('/t/o/', '/t/c/'),
    ]) {
      const answer = await visit(bad, desktopClient);
      assert.equal(answer.status, 404, bad);
      assert.equal(answer.headers.get('location'), null);
      assert.doesNotMatch(answer.body.toString('utf8'), /shop\.example|private\.example/);
    }
    const pixel = await visit(flip(open), desktopClient);
    assert.equal(pixel.status, 200);
    assert.equal(pixel.headers.get('content-type'), 'image/gif');
    // A click token used as an open token is foreign to the open route: the image, nothing recorded.
    await visit(click.replace('/t/c/', '/t/o/'), desktopClient);
    await afterResponsesSettled();
    const tracked = (await queryMessage(sending.token, uuid)).recipients[0].tracking;
    assert.equal(tracked, undefined, 'nothing recorded');
  });

  test('on per domain, one copy per recipient; authentication mail stays untracked', async () => {
    const domain = await sendingDomain('ed25519-sha256');
    await setDomainTracking(domain.domain, { opens: true, clicks: false });
    const { uuid } = await addMessage(domain.token, {
      message_sender: `news@${domain.domain}`,
      to: ['one@example.net', 'two@example.net'],
      content: { kind: 'html_only', html: htmlWithLinks() },
    });
    await waitForStatus(domain.token, uuid, settled);
    const transactions = smtpTransactions(uuid);
    assert.equal(transactions.length, 2, 'a copy per recipient');
    const eml = outboxEml(uuid) as Buffer;
    const html = (await PostalMime.parse(eml)).html ?? '';
    assert.equal(trackingUrls(html, 'o').length, 1, 'the domain default turns opens on');
    assert.equal(trackingUrls(html, 'c').length, 0, 'and leaves clicks off');
    assert.equal((await verifyDkim(eml))[0]?.result, 'pass');

    const auth = await addMessage(domain.token, {
      message_sender: `login@${domain.domain}`,
      to: ['three@example.net'],
      tags: [{ name: 'category', value: 'authentication' }],
      content: { kind: 'html_only', html: '<p>Your code is 123456</p>' },
    });
    await waitForStatus(domain.token, auth.uuid, settled);
    assert.deepEqual(trackingUrls(outboxEml(auth.uuid)?.toString('utf8') ?? '', 'o'), []);
  });

  test('statistics count opens and clicks once per recipient, and human opens apart', async () => {
    // Of this file's messages on this domain: ada opened (a person) and clicked three times, grace's
    // open was Apple's proxy, the others recorded nothing.
    const now = Date.now();
    const data = await waitForTotals(
      sending.token,
      {
        date_from: new Date(now - 86_400_000).toISOString(),
        date_to: new Date(now + 3_600_000).toISOString(),
        granularity: 'day',
      },
      { opened: 2, clicked: 1, human_opened: 1 },
    );
    assert.equal(data.totals.opened, 2);
  });

  test('tracking with unknown keys, non-boolean values or on eml content is 107 with details', async () => {
    const bad = [
      { tracking: { opens: 'yes' } },
      { tracking: { opens: true, pixels: true } },
      { tracking: true },
      {
        tracking: { clicks: true },
        content: {
          kind: 'eml',
          eml: Buffer.from(
            `From: a@${sending.domain}\r\nTo: b@example.net\r\nSubject: x\r\n\r\nhi\r\n`,
          ).toString('base64'),
        },
      },
    ];
    for (const extra of bad) {
      const response = await call('POST', '/message/add-1.0', {
        token: sending.token,
        body: {
          message_sender: `orders@${sending.domain}`,
          to: ['x@example.net'],
          content: { kind: 'html_only', html: '<p>x</p>' },
          ...extra,
        },
      });
      assert.ok(response.status >= 400 && response.status < 500, response.text);
      assert.equal(response.body.error.code, 107);
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field.startsWith('tracking')),
        response.text,
      );
    }
  });
});

vi.setConfig({ testTimeout: 180_000 });
