import assert from 'node:assert/strict';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  apiRequested,
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  screenshot,
  signIn,
} from '../support/browser.ts';
import { outboxEml, waitForStatus } from '../support/delivery.ts';
import { created, newAccount, type TestAccount } from '../support/messages.ts';
import {
  afterResponsesSettled,
  applePrivacyProxy,
  desktopClient,
  trackingUrls,
  visit,
} from '../support/tracking.ts';

/*
 * Opens and clicks in Chromium (docs/tracking.md): a tracked message opened by a person and by
 * Apple's proxy, one link clicked; the Message page shows them per recipient, the Dashboard counts
 * them.
 */
let browser: ConsoleBrowser;
let who: TestAccount;
let uuid: string;

beforeAll(async () => {
  who = await newAccount('e2e-track');
  uuid = await created(who, {
    to: ['Ada <ada@recipient.test>', 'grace@recipient.test'],
    subject: 'Your order has shipped',
    content: {
      kind: 'html_only',
      html: '<p>Your order is on its way: <a href="https://shop.example/orders/4711">track it</a>.</p>',
    },
    tracking: { opens: true, clicks: true },
  });
  await waitForStatus(who.token, uuid, ['delivered']);
  // The outbox keeps the last copy: grace's. Her open is Apple's proxy, and she clicks.
  const html = (await PostalMime.parse(outboxEml(uuid) as Buffer)).html ?? '';
  const [open] = trackingUrls(html, 'o');
  const [click] = trackingUrls(html, 'c');
  assert.ok(open && click, html);
  assert.equal((await visit(open, applePrivacyProxy)).status, 200);
  assert.equal((await visit(open, desktopClient)).status, 200);
  assert.equal(
    (await visit(click, desktopClient)).headers.get('location'),
    'https://shop.example/orders/4711',
  );
  // The routes record after their answers: the page is read once they are recorded.
  await afterResponsesSettled();
  browser = await openConsoleBrowser();
  await signIn(browser, { account: who.account });
});

afterAll(async () => {
  await browser?.close();
});

describe('console: opens and clicks', () => {
  it('the Message page shows each recipient’s opens and clicks', async () => {
    const { page } = browser;
    await page.goto(`${browser.consoleUrl}#/message/${uuid}`);
    const table = page.getByRole('table', { name: 'Opens and clicks' });
    await table.waitFor();
    const grace = table.locator('tbody tr', { hasText: 'grace@recipient.test' });
    const cells = await grace.locator('td').allTextContents();
    assert.equal(cells[1], '2', 'two opens');
    assert.equal(cells[4], '1', 'one click');
    assert.match(cells[5] ?? '', /shop\.example\/orders\/4711/);
    assert.match(cells[2] ?? '', /127\.0\.0\.0\/24/, 'the client network, truncated');
    const ada = await table
      .locator('tbody tr', { hasText: 'ada@recipient.test' })
      .locator('td')
      .allTextContents();
    assert.deepEqual([ada[1], ada[4]], ['0', '0']);
    await screenshot(page, 'message-tracking');
    await expectAccessible(page, 'Message (opens and clicks)');
  });

  it('the Dashboard counts opened, human_opened and clicked once per recipient', async () => {
    const { page } = browser;
    await page.goto(`${browser.consoleUrl}#/dashboard`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answered = apiRequested(page, '/stats/query-1.0');
      await page.getByRole('button', { name: 'Refresh' }).click();
      await (await answered).response();
      await page.locator('dl.totals').or(page.getByText('No messages in this period')).first().waitFor();
      const totals = page.locator('dl.totals');
      if ((await totals.count()) > 0) {
        const terms = await totals.locator('dt').allTextContents();
        const values = await totals.locator('dd').allTextContents();
        const seen = Object.fromEntries(terms.map((term, index) => [term, values[index]]));
        if (seen.opened === '1' && seen.human_opened === '1' && seen.clicked === '1') break;
        assert.ok(Date.now() < deadline, `the counters catch up: ${JSON.stringify(seen)}`);
      }
      await page.waitForTimeout(500);
    }
    await screenshot(page, 'dashboard-tracking');
    await expectAccessible(page, 'Dashboard (opens and clicks)');
  });
});
