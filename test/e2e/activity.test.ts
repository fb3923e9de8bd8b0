import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  apiRequested,
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  screenshot,
  signIn,
  waitForConsole,
} from '../support/browser.ts';
import { created, mapLimit, newAccount, query, type TestAccount } from '../support/messages.ts';

/*
 * The console in Debian's Chromium against the run's local host: sign-in through the local
 * OpenID provider, the Activity page in its empty, loading, error and listed states, filters kept
 * in the address (subject search, status, dates, tag, recipient, metadata), paging, the CSV export, and a session that expires coming back to the same page.
 */
let browser: ConsoleBrowser;
let who: TestAccount;

/** Every document the page's main frame requests, redirects included (the OpenID round trip). */
function navigations(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) urls.push(request.url());
  });
  return urls;
}

/**
 * Resolves once the page has asked for the list with exactly these filters (the page size aside):
 * from then on the table is loading or that list, never the list before (test/support/browser.ts,
 * `apiRequested`).
 */
function listRequested(page: Page, filters: Record<string, unknown>): Promise<unknown> {
  return apiRequested(page, '/message/query-1.0', (body) => {
    const { limit: _pageSize, ...asked } = (body.filters ?? {}) as Record<string, unknown>;
    return isDeepStrictEqual(asked, filters);
  });
}

/** Opens Activity at `query` and waits until the page has asked for the list with `filters`. */
async function openActivity(page: Page, query: string, filters: Record<string, unknown>): Promise<void> {
  const asked = listRequested(page, filters);
  await page.goto(`${browser.consoleUrl}#/activity${query}`);
  await asked;
}

beforeAll(async () => {
  who = await newAccount('e2e-act');
  browser = await openConsoleBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('console: sign-in and Activity', () => {
  it('signs in through the OpenID provider (authorization code + PKCE) and shows an empty Activity', async () => {
    const { page } = browser;
    const visited = navigations(page);
    await page.goto(`${browser.consoleUrl}#/activity`);
    await page.waitForURL(/\/interaction\//);
    await screenshot(page, 'sign-in');
    await expectAccessible(page, 'the identity provider login page');
    assert.ok(
      await page.locator('input[name=scope][value="messages:read_content"]').isChecked(),
      'the provider offers the content scope the console asks for',
    );
    await page.getByLabel('Account').fill(who.account);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await waitForConsole(browser);

    assert.ok(
      visited.some((url) => url.includes('/auth?') && url.includes('code_challenge_method=S256')),
      `the console asked the provider for a code with PKCE: ${visited.join(' ')}`,
    );
    assert.ok(
      visited.some((url) => url.startsWith(browser.consoleUrl) && url.includes('code=')),
      'and came back with a code',
    );
    assert.equal(new URL(page.url()).hash, '#/activity', 'the code left the address, the page stayed');
    assert.equal(new URL(page.url()).search, '');
    await page.getByRole('heading', { name: 'Activity' }).waitFor();
    await page.getByText('No messages yet').waitFor();
    // This account has a sending domain: the "no sending domain" hint (test/e2e/domains-self-service.test.ts) stays away.
    await page.waitForLoadState('networkidle');
    assert.equal(await page.getByText('No sending domain yet?').count(), 0);
    await page.getByText(who.account).waitFor();
    await screenshot(page, 'activity-empty');
    await expectAccessible(page, 'Activity (empty)');
  });

  it('lists the messages sent through the API, newest first, filters them by status and date, and pages', async () => {
    const { page } = browser;
    // 52 held messages (the pipeline leaves them alone) and one to a formula-like subject, sent
    // through the API with the account's token.
    const held = await mapLimit(
      Array.from({ length: 52 }, (_, index) => index),
      4,
      (index) => created(who, { subject: `Held ${index}`, scheduling: { mode: 'manual-wait' } }),
    );
    const formula = await created(who, { subject: '=HYPERLINK("http://x.test")' });

    await page.goto(`${browser.consoleUrl}#/activity`);
    await page.reload();
    await waitForConsole(browser);
    const rows = page.locator('table.list tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 50, 'a page is 50 messages');
    assert.match((await rows.first().textContent()) ?? '', /HYPERLINK/, 'newest first');
    await screenshot(page, 'activity', { fullPage: false });
    await expectAccessible(page, 'Activity (listed)');

    // Status filter, through the bar's status menu: the address carries it.
    await page.getByText('Any status').click();
    await page.getByLabel('waiting').check();
    await page.getByText('Status (1)').waitFor();
    const waiting = listRequested(page, { status: ['waiting'] });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=waiting/);
    await waiting;
    await page.getByRole('link', { name: 'Next page' }).waitFor();
    assert.equal(await rows.count(), 50, 'the first page of the 52 waiting messages');
    assert.ok(!(await page.getByText('HYPERLINK').isVisible()), 'the queued one is filtered out');
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/cursor=/);
    await page.getByText('End of the list').waitFor();
    assert.equal(await rows.count(), 2, '52 waiting messages: 50, then 2');

    // A date range that ends before the messages were created matches nothing.
    await page.goto(`${browser.consoleUrl}#/activity?to=2020-01-01T00:00:00%2B00:00`);
    await page.getByText('No messages match these filters').waitFor();
    await screenshot(page, 'activity-no-match');

    // A reversed range is the API's 107, shown with its details and a retry.
    await page.goto(
      `${browser.consoleUrl}#/activity?from=2030-01-01T00:00:00%2B00:00&to=2020-01-01T00:00:00%2B00:00`,
    );
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /Error 107/);
    assert.match((await alert.textContent()) ?? '', /date_from is after date_to/);
    await screenshot(page, 'activity-error');
    await expectAccessible(page, 'Activity (error)');
    assert.ok(held.length === 52 && formula);
  });

  it('shows the loading state while the query is on its way', async () => {
    const { page } = browser;
    let release: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The real request, held back (not answered) until the loading state has been seen.
    await page.route('**/message/query-1.0', async (route) => {
      await holding;
      await route.continue();
    });
    await page.goto(`${browser.consoleUrl}#/activity?status=waiting`);
    await page.getByRole('status').filter({ hasText: 'Loading messages' }).waitFor();
    await screenshot(page, 'activity-loading');
    await expectAccessible(page, 'Activity (loading)');
    release();
    await page.locator('table.list tbody tr').first().waitFor();
    await page.unrouteAll();
  });

  it('exports what is filtered as CSV, formula-like cells defused', async () => {
    const { page } = browser;
    await openActivity(page, '', {});
    await page.locator('table.list tbody tr').first().waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const csv = readFileSync(await download.path(), 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    assert.equal(
      lines[0],
      'message_uuid,created_at,updated_at,status,message_sender,subject,content_kind,recipients_count,scheduling_mode,send_at',
    );
    assert.equal(lines.length, 1 + 53, 'every message of the account, not just the page on screen');
    const formulaLine = lines.find((line) => line.includes('HYPERLINK')) as string;
    assert.match(formulaLine, /,"'=HYPERLINK\(""http:\/\/x\.test""\)",/, 'an apostrophe keeps it text');
    await page.getByText('Exported 53 messages').waitFor();

    await openActivity(page, '?status=waiting', { status: ['waiting'] });
    await page.locator('table.list tbody tr').first().waitFor();
    const [filtered] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const filteredLines = readFileSync(await filtered.path(), 'utf8')
      .trimEnd()
      .split('\r\n');
    assert.equal(filteredLines.length, 1 + 52, 'only what the filters match');
    assert.ok(filteredLines.slice(1).every((line) => line.includes(',waiting,')));
  });

  it('finds a message sent through the API by tag, by recipient and by metadata, and exports the tagged ones', async () => {
    const { page } = browser;
    const recipient = `Tagged.${Date.now()}@recipient.test`;
    const tagged = await created(who, {
      subject: 'Password reset',
      to: [recipient],
      tags: [{ name: 'category', value: 'password-reset' }],
      metadata: { customer: 'c-1029' },
    });
    await created(who, { subject: 'Other category', tags: [{ name: 'category', value: 'receipt' }] });

    await openActivity(page, '', {});
    await page.locator('table.list tbody tr').first().waitFor();
    await page.getByText('More filters').click();
    await page.getByLabel('Tag name').fill('category');
    await page.getByLabel('Tag value').fill('password-reset');
    const byTag = listRequested(page, { tag: { name: 'category', value: 'password-reset' } });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/tag=category%3Apassword-reset/);
    await byTag;
    const rows = page.locator('table.list tbody tr');
    await page.getByRole('link', { name: 'Password reset' }).waitFor();
    assert.equal(await rows.count(), 1, 'only the tagged message');
    assert.equal(
      await page.getByLabel('Tag value').inputValue(),
      'password-reset',
      'the form shows the filter',
    );
    await screenshot(page, 'activity-tag', { fullPage: false });
    await expectAccessible(page, 'Activity (tag filter)');

    // The export follows the filters: the tagged message only.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const lines = readFileSync(await download.path(), 'utf8')
      .trimEnd()
      .split('\r\n');
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.ok((lines[1] as string).startsWith(`${tagged},`));

    // By recipient (another case finds it), from a fresh address: the filter lives in the address.
    await openActivity(page, '', {});
    await page.locator('table.list tbody tr').first().waitFor();
    await page.getByLabel('Recipient').fill(recipient.toLowerCase());
    const byRecipient = listRequested(page, { recipient: recipient.toLowerCase() });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/recipient=/);
    await byRecipient;
    await page.getByRole('link', { name: 'Password reset' }).waitFor();
    assert.equal(await rows.count(), 1, 'only the message to that recipient');

    // By subject, ignoring case, from the search box; the pages fill themselves although the
    // API checks the subject on the messages it walks through (50 held ones here).
    await openActivity(page, '', {});
    await page.locator('table.list tbody tr').first().waitFor();
    const bySubject = listRequested(page, { subject: 'PASSWORD' });
    await page.getByLabel('Search subject').fill('PASSWORD');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/subject=PASSWORD/);
    await bySubject;
    await page.getByRole('link', { name: 'Password reset' }).waitFor();
    assert.equal(await rows.count(), 1, 'only the message with that subject');
    assert.equal(
      await page.getByLabel('Search subject').inputValue(),
      'PASSWORD',
      'the bar shows the search',
    );
    await screenshot(page, 'activity-subject', { fullPage: false });
    await expectAccessible(page, 'Activity (subject search)');
    await openActivity(page, '?subject=Held%200', { subject: 'Held 0' });
    await page.getByRole('link', { name: 'Held 0', exact: true }).waitFor();
    assert.equal(await rows.count(), 1, 'one of the first messages, behind many that do not match');

    // By metadata pair, straight from the address; and a tag nobody carries matches nothing.
    await openActivity(page, '?metadata=customer%3Ac-1029', { metadata: { customer: 'c-1029' } });
    await page.getByRole('link', { name: 'Password reset' }).waitFor();
    assert.equal(await rows.count(), 1);
    await page.goto(`${browser.consoleUrl}#/activity?tag=category%3Anone`);
    await page.getByText('No messages match these filters').waitFor();

    // The Message page shows the tag, which leads back to the filtered list.
    await page.goto(`${browser.consoleUrl}#/message/${tagged}`);
    // The content loads on its own above the details and pushes them down when it arrives: a
    // click in that instant (a slow machine) would miss the link, so it waits for the content.
    await page.locator('summary', { hasText: 'Text part' }).waitFor();
    await page.getByRole('link', { name: 'category: password-reset' }).click();
    await page.waitForURL(/#\/activity\?tag=category%3Apassword-reset$/);
    await page.getByRole('link', { name: 'Password reset' }).waitFor();
  });

  it('releases and cancels held messages in bulk from the list', async () => {
    const { page } = browser;
    const bulk = await mapLimit([0, 1, 2, 3, 4], 2, (index) =>
      created(who, { subject: `Bulk ${index}`, scheduling: { mode: 'manual-wait' } }),
    );
    await page.goto(`${browser.consoleUrl}#/activity?status=waiting`);
    await page.getByRole('button', { name: 'Refresh' }).click();
    for (const index of [0, 1, 2]) await page.getByLabel(`Select Bulk ${index}`, { exact: true }).check();
    await page.getByText('3 messages selected').waitFor();
    await screenshot(page, 'activity-bulk', { fullPage: false });
    await expectAccessible(page, 'Activity (bulk selection)');
    await page.getByRole('button', { name: 'Release 3' }).click();
    await page.getByText('Released 3 messages.').waitFor();
    for (const index of [3, 4]) await page.getByLabel(`Select Bulk ${index}`, { exact: true }).check();
    await page.getByRole('button', { name: 'Cancel 2' }).click();
    await page.getByRole('button', { name: 'Yes, cancel 2' }).click();
    await page.getByText('Cancelled 2 messages.').waitFor();

    const statuses = await Promise.all(
      bulk.map(async (uuid) => (await query(who, { message_uuid: uuid })).body.data.status as string),
    );
    assert.ok(
      statuses.slice(0, 3).every((status) => !['waiting', 'cancelled'].includes(status)),
      `released: ${statuses.join(', ')}`,
    );
    assert.deepEqual(statuses.slice(3), ['cancelled', 'cancelled']);
  });

  it('signs out at the provider, after which opening the console asks to sign in again', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign out of the local identity provider?' }).waitFor();
    await expectAccessible(page, 'the identity provider sign-out page');
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    // Back on the console, which has no session: it starts the sign-in, and the provider asks.
    await page.waitForURL(/\/interaction\//);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });

  it('sends an expired session back through the provider to the same page, filters included', async () => {
    const short = await openConsoleBrowser();
    try {
      const route = '#/activity?status=waiting';
      await signIn(short, { account: who.account, lifetime: 30, route });
      const signedInAt = Date.now();
      await short.page.locator('table.list tbody tr').first().waitFor();
      const visited = navigations(short.page);
      // The token lives 30 s; the console renews 5 s before the end. Wait for that moment to pass.
      while (Date.now() - signedInAt < 26_000) await new Promise((resolve) => setTimeout(resolve, 500));
      // The click only changes the address; the console goes back to the provider after it (a
      // page that stayed would time out here), and only the page after the round trip ends the list.
      const toProvider = short.page.waitForRequest(
        (request) => request.isNavigationRequest() && request.url().includes('/auth?'),
      );
      await short.page.getByRole('link', { name: 'Next page' }).click();
      await toProvider;
      await short.page.getByText('End of the list').waitFor();
      await waitForConsole(short);
      assert.ok(
        !visited.some((url) => url.includes('/interaction/')),
        'silently: the provider session holds',
      );
      const hash = new URL(short.page.url()).hash;
      assert.match(hash, /^#\/activity\?status=waiting&cursor=/, 'the page it was going to');
    } finally {
      await short.close();
    }
  });
});
