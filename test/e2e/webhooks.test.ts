import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  apiRequested,
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  screenshot,
  signIn,
} from '../support/browser.ts';
import { waitForStatus } from '../support/delivery.ts';
import { created, newAccount, type TestAccount } from '../support/messages.ts';
import { startWebhookReceiver, verifiesByHand, type WebhookReceiver } from '../support/webhook-receiver.ts';

/*
 * The Webhooks page in Chromium against a real receiver on loopback: an endpoint added from the
 * page (its secret shown once), a delivery attempt of a real message's event shown with its status
 * code, the secret rotated, and the event replayed and signed with the new secret (and the old
 * one, during the overlap).
 */
let browser: ConsoleBrowser;
let who: TestAccount;
let receiver: WebhookReceiver;

beforeAll(async () => {
  who = await newAccount('e2e-wh');
  receiver = await startWebhookReceiver();
  browser = await openConsoleBrowser();
  await signIn(browser, { account: who.account, route: '#/webhooks' });
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
});

describe('console: Webhooks', () => {
  let firstSecret: string;

  it('adds an endpoint and shows its secret once', async () => {
    const { page } = browser;
    await page.getByText('No webhook endpoints').waitFor();
    await screenshot(page, 'webhooks-empty');
    await expectAccessible(page, 'Webhooks (empty)');

    await page.getByLabel('URL').fill(`${receiver.url}/hooks`);
    await page.getByLabel('Description').fill('Order system');
    await page.getByLabel('message.delayed').uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByText('Endpoint added.').waitFor();
    firstSecret = (await page.locator('code.secret').textContent()) ?? '';
    assert.match(firstSecret, /^whsec_/);
    await page.getByRole('link', { name: `${receiver.url}/hooks` }).waitFor();
    assert.match(
      (await page.getByRole('row', { name: /Order system/ }).textContent()) ?? '',
      /message\.sent, message\.delivered/,
      'the chosen events, not "all"',
    );
    await screenshot(page, 'webhooks');
    await expectAccessible(page, 'Webhooks');
  });

  it('shows the delivery attempts of a message’s events with their status codes', async () => {
    const { page } = browser;
    const uuid = await created(who, { subject: 'Hooked' });
    await waitForStatus(who.token, uuid, ['delivered']);
    await receiver.waitFor((list) => list.some((request) => request.body.includes('"message.delivered"')));
    assert.ok(receiver.received.every((request) => verifiesByHand(firstSecret, request)));

    await page.getByRole('link', { name: `${receiver.url}/hooks` }).click();
    await page.getByRole('heading', { name: `${receiver.url}/hooks` }).waitFor();
    const attempts = page.locator('table.list tbody tr');
    // Attempts are recorded once the receiver has answered: refresh until both are listed.
    const deadline = Date.now() + 60_000;
    while ((await attempts.count()) < 2) {
      assert.ok(Date.now() < deadline, 'the attempts appear');
      // One refresh at a time: a newer one would discard the answer of the one before.
      const answered = apiRequested(page, '/webhook/query-1.0');
      await page.getByRole('button', { name: 'Refresh attempts' }).click();
      await (await answered).response();
      await page.waitForTimeout(300);
    }
    const delivered = attempts.filter({ hasText: 'message.delivered' });
    assert.match((await delivered.textContent()) ?? '', /HTTP 200/);
    await screenshot(page, 'webhook');
    await expectAccessible(page, 'Webhook endpoint');
  });

  it('rotates the secret; a replayed event is signed with the new one', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('button', { name: 'Yes, rotate secret' }).click();
    await page.getByText('Secret rotated.').waitFor();
    const secret = (await page.locator('code.secret').textContent()) ?? '';
    assert.match(secret, /^whsec_/);
    assert.notEqual(secret, firstSecret);

    const delivered = page.locator('table.list tbody tr').filter({ hasText: 'message.delivered' }).first();
    const eventId = (await delivered.locator('code').textContent()) as string;
    const before = receiver.received.length;
    await delivered.getByRole('button', { name: `Replay event ${eventId}` }).click();
    await page.getByText(`Event ${eventId} is queued for delivery again.`).waitFor();
    const [replayed] = (await receiver.waitFor((list) => list.length > before)).slice(before);
    assert.equal(replayed?.headers['webhook-id'], eventId, 'the same event id');
    assert.ok(verifiesByHand(secret, replayed as never), 'signed with the rotated secret');
    assert.ok(verifiesByHand(firstSecret, replayed as never), 'and, for 24 hours, with the old one');
    assert.equal(String(replayed?.headers['webhook-signature']).split(' ').length, 2);
  });

  it('sends a test event of a chosen type; its attempt is listed', async () => {
    const { page } = browser;
    const before = receiver.received.length;
    await page.getByLabel('Event type').selectOption('message.bounced');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText(/A test message.bounced event \(evt_[0-9a-f]{32}\) is queued/).waitFor();
    const [test] = (
      await receiver.waitFor((list) => list.slice(before).some((r) => r.body.includes('"message.bounced"')))
    ).slice(before);
    assert.ok(test !== undefined);
    const body = JSON.parse(test.body);
    assert.equal(body.data.message_uuid, '00000000-0000-0000-0000-000000000000');
    const eventId = String(test.headers['webhook-id']);
    const row = page.locator('table.list tbody tr').filter({ hasText: eventId });
    const deadline = Date.now() + 60_000;
    while ((await row.count()) === 0) {
      assert.ok(Date.now() < deadline, 'the test attempt appears');
      const answered = apiRequested(page, '/webhook/query-1.0');
      await page.getByRole('button', { name: 'Refresh attempts' }).click();
      await (await answered).response();
    }
    assert.match((await row.textContent()) ?? '', /message\.bounced.*HTTP 200/s);
    await screenshot(page, 'webhook-test-event');
    await expectAccessible(page, 'Webhook endpoint with a test event');
  });

  it('changes the URL and events; the secret stays', async () => {
    const { page } = browser;
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/moved`);
    await page.getByRole('group', { name: 'Events it receives' }).getByLabel('message.sent').uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Endpoint changed; its secret stays the same.').waitFor();
    await page.getByRole('heading', { name: `${receiver.url}/moved` }).waitFor();
    assert.doesNotMatch((await page.locator('dl.facts').textContent()) ?? '', /message\.sent/);
  });
});
