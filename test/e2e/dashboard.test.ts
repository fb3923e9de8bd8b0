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

/*
 * The Dashboard in Chromium: empty for a new account; after a known mix of mail sent through the
 * API (delivered, bounced at RCPT, held), the totals, the rates against SES's levels, and the
 * figures by sending domain and by tag; the loading and error states.
 */
let browser: ConsoleBrowser;
let who: TestAccount;

beforeAll(async () => {
  who = await newAccount('e2e-dash');
  browser = await openConsoleBrowser();
  await signIn(browser, { account: who.account, route: '#/dashboard' });
});

afterAll(async () => {
  await browser?.close();
});

/** The totals on screen, counter by counter. */
async function totals(): Promise<Record<string, string>> {
  const cells = browser.page.locator('dl.totals');
  const terms = await cells.locator('dt').allTextContents();
  const values = await cells.locator('dd').allTextContents();
  return Object.fromEntries(terms.map((term, index) => [term, values[index] as string]));
}

/** Refreshes until the totals read `expected` (the counters follow the table's stream within seconds). */
async function waitForTotals(expected: Record<string, string>): Promise<void> {
  const { page } = browser;
  const deadline = Date.now() + 60_000;
  for (;;) {
    // One refresh at a time: a newer one would discard the answer of the one before.
    const answered = apiRequested(page, '/stats/query-1.0');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await (await answered).response();
    await page.locator('dl.totals').or(page.getByText('No messages in this period')).first().waitFor();
    const seen = (await page.locator('dl.totals').count()) === 0 ? {} : await totals();
    const matches = Object.entries(expected).every(([name, value]) => seen[name] === value);
    if (matches) return;
    assert.ok(Date.now() < deadline, `the counters catch up: ${JSON.stringify(seen)}`);
    await page.waitForTimeout(500);
  }
}

describe('console: Dashboard', () => {
  it('shows an empty period for an account with no mail', async () => {
    const { page } = browser;
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByText('No messages in this period').waitFor();
    // This account has a sending domain: the "no sending domain" hint (test/e2e/domains-self-service.test.ts) stays away.
    await page.waitForLoadState('networkidle');
    assert.equal(await page.getByText('No sending domain yet?').count(), 0);
    await screenshot(page, 'dashboard-empty');
    await expectAccessible(page, 'Dashboard (empty)');
  });

  it('counts a known mix: totals, rates against the SES levels, by domain and by tag', async () => {
    const { page } = browser;
    const receipt = [{ name: 'category', value: 'receipt' }];
    const sent = [
      await created(who, { to: ['a1@recipient.test', 'a2@recipient.test'], tags: receipt }), // 2 sent, 2 delivered
      await created(who, { to: ['a3@recipient.test'] }), // 1 sent, 1 delivered
      await created(who, { to: ['bounce-1@recipient.test'], tags: receipt }), // refused at RCPT: 1 bounced
    ];
    await created(who, { to: ['a4@recipient.test'], scheduling: { mode: 'manual-wait' } }); // accepted only
    for (const uuid of sent) await waitForStatus(who.token, uuid, ['delivered', 'bounced']);

    await waitForTotals({
      accepted: '4',
      sent: '3',
      delivered: '3',
      bounced: '1',
      complained: '0',
      suppressed: '0',
      failed: '0',
      'bounce rate': '33.3 %',
      'complaint rate': '0 %',
    });
    // 1 bounced of 3 sent is far above the 10 % at which SES may pause an account.
    assert.match(
      (await page.getByRole('note').textContent()) ?? '',
      /bounce rate is at or above the level where SES may pause an account \(10\.0 %\)/,
    );
    // The charts are drawn after the page is painted.
    await page.locator('figure.chart canvas').nth(2).waitFor();
    const legend = await page.locator('figure.chart').nth(1).locator('.u-legend').textContent();
    assert.match(legend ?? '', /SES review.*SES may pause/, 'the bounce chart has both guard lines');
    await screenshot(page, 'dashboard');
    await expectAccessible(page, 'Dashboard');

    // By sending domain: one row, the account's domain, with the same counts.
    await page.getByRole('combobox', { name: /^Group by/ }).selectOption('domain');
    await page.waitForURL(/group=domain/);
    const domainRow = page.locator('table.list tbody tr', { hasText: who.domain });
    await domainRow.waitFor();
    assert.deepEqual((await domainRow.locator('td').allTextContents()).slice(0, 7), [
      '4',
      '3',
      '3',
      '1',
      '0',
      '0',
      '0',
    ]);

    // By tag: the tagged messages only (2 to the receipt list delivered, 1 bounced).
    await page.getByRole('combobox', { name: /^Group by/ }).selectOption('tag');
    await page.waitForURL(/group=tag/);
    const tagRow = page.locator('table.list tbody tr', { hasText: 'category:receipt' });
    await tagRow.waitFor();
    assert.deepEqual((await tagRow.locator('td').allTextContents()).slice(0, 7), [
      '2',
      '2',
      '2',
      '1',
      '0',
      '0',
      '0',
    ]);
    assert.equal(await page.locator('table.list tbody tr').count(), 1, 'the untagged message has no row');
    await screenshot(page, 'dashboard-by-tag');
    await expectAccessible(page, 'Dashboard (by tag)');

    // A daily period keeps the grouping in the address.
    const daily = apiRequested(page, '/stats/query-1.0', (body) => body.granularity === 'day');
    await page.getByRole('combobox', { name: /^Period/ }).selectOption('30d');
    await page.waitForURL(/range=30d&group=tag/);
    await daily;
    await tagRow.waitFor();
  });

  it('shows the loading state, then an error with a retry when the API cannot be reached', async () => {
    const { page } = browser;
    let release: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/stats/query-1.0', async (route) => {
      await holding;
      await route.abort();
    });
    await page.goto(`${browser.consoleUrl}#/dashboard?range=7d`);
    await page.getByRole('status').filter({ hasText: 'Loading the statistics' }).waitFor();
    await screenshot(page, 'dashboard-loading');
    release();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /could not be reached/);
    await expectAccessible(page, 'Dashboard (error)');
    await page.unrouteAll();
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.locator('dl.totals').waitFor();
  });
});
