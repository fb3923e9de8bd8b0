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
import { outboxEml, waitForStatus } from '../support/delivery.ts';
import { created, newAccount, type TestAccount } from '../support/messages.ts';
import { postOneClick, unsubscribeUrlOf } from '../support/streams.ts';

/*
 * Streams in Chromium: a broadcast delivered and unsubscribed through its one-click link (as Gmail
 * posts it); the Dashboard counts the unsubscribe and groups by stream, and the Suppressions page
 * shows the entry as broadcast only and filters by stream.
 */
let browser: ConsoleBrowser;
let who: TestAccount;
const address = `reader-${Date.now()}@recipient.test`;

beforeAll(async () => {
  who = await newAccount('e2e-streams');
  const broadcast = await created(who, { to: [address], stream: 'broadcast' });
  const receipt = await created(who, { to: ['buyer@recipient.test'] });
  for (const uuid of [broadcast, receipt]) await waitForStatus(who.token, uuid, ['delivered']);
  const raw = outboxEml(broadcast);
  if (raw === undefined) throw new Error('the broadcast was not delivered to the outbox');
  const posted = await postOneClick(unsubscribeUrlOf(raw));
  assert.equal(posted.status, 200, posted.text);
  browser = await openConsoleBrowser();
  await signIn(browser, { account: who.account, route: '#/dashboard' });
});

afterAll(async () => {
  await browser?.close();
});

async function totals(): Promise<Record<string, string>> {
  const cells = browser.page.locator('dl.totals');
  const terms = await cells.locator('dt').allTextContents();
  const values = await cells.locator('dd').allTextContents();
  return Object.fromEntries(terms.map((term, index) => [term, values[index] as string]));
}

describe('console: streams', () => {
  it('the Dashboard counts the unsubscribe and shows the figures by stream', async () => {
    const { page } = browser;
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    // The counters follow the table's stream within seconds: refresh until they have it.
    await untilPasses(async () => {
      const answered = apiRequested(page, '/stats/query-1.0');
      await page.getByRole('button', { name: 'Refresh' }).click();
      await (await answered).response();
      await page.locator('dl.totals').or(page.getByText('No messages in this period')).first().waitFor();
      const seen = (await page.locator('dl.totals').count()) === 0 ? {} : await totals();
      assert.equal(seen.unsubscribed, '1', JSON.stringify(seen));
      assert.equal(seen.delivered, '2', JSON.stringify(seen));
    });
    await screenshot(page, 'dashboard-unsubscribed');
    await expectAccessible(page, 'Dashboard (unsubscribed)');

    // By stream: one row each; the unsubscribe counts under broadcast.
    await page.getByRole('combobox', { name: /^Group by/ }).selectOption('stream');
    await page.waitForURL(/group=stream/);
    const counts = async (key: string) => {
      const row = page.locator('table.list tbody tr', { hasText: key });
      await row.waitFor();
      return (await row.locator('td').allTextContents()).slice(0, 8);
    };
    assert.deepEqual(await counts('broadcast'), ['1', '1', '1', '0', '0', '0', '0', '1']);
    assert.deepEqual(await counts('transactional'), ['1', '1', '1', '0', '0', '0', '0', '0']);
    await screenshot(page, 'dashboard-by-stream');
  });

  it('the Suppressions page shows the unsubscribe as broadcast only and filters by stream', async () => {
    const { page } = browser;
    await page.goto(page.url().replace(/#.*$/, '#/suppressions'));
    await page.getByRole('cell', { name: address, exact: true }).waitFor();
    const row = page.getByRole('row', { name: new RegExp(address.replace(/[.]/g, '\\.')) });
    assert.match((await row.textContent()) ?? '', /unsubscribed.*broadcast only/);

    await page.getByLabel('Stream').selectOption('all');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No suppressions match these filters').waitFor();
    await page.getByLabel('Stream').selectOption('broadcast');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('cell', { name: address, exact: true }).waitFor();
    await screenshot(page, 'suppressions-stream');
    await expectAccessible(page, 'Suppressions (by stream)');
  });
});

/** Retries `check` until it passes (the counting consumer lags the table by a batch). */
async function untilPasses(check: () => Promise<void>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await browser.page.waitForTimeout(500);
    }
  }
}
