import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  screenshot,
  signIn,
} from '../support/browser.ts';
import { call, mintToken, uniqueAccount } from '../support/host.ts';

/*
 * The Suppressions page in Chromium: the empty list, addresses added by hand and found by the
 * search, one removed (after asking), and a CSV file imported with a header row and an invalid
 * address set aside; every change checked through the API.
 */
let browser: ConsoleBrowser;
const account = uniqueAccount('e2e-sup');
let token: string;

async function suppressed(email: string): Promise<boolean> {
  const response = await call('POST', '/suppression/query-1.0', { token, body: { email } });
  return response.body.data.suppression !== null;
}

beforeAll(async () => {
  token = await mintToken({ account });
  browser = await openConsoleBrowser();
  await signIn(browser, { account, route: '#/suppressions' });
});

afterAll(async () => {
  await browser?.close();
});

describe('console: Suppressions', () => {
  it('shows the empty list, then adds addresses by hand and finds them', async () => {
    const { page } = browser;
    await page.getByText('Your suppression list is empty').waitFor();
    await screenshot(page, 'suppressions-empty');
    await expectAccessible(page, 'Suppressions (empty)');

    await page
      .getByLabel('Addresses (one per line, or separated by commas)')
      .fill('Ada@Example.org\ngrace@example.org');
    await page.getByRole('button', { name: 'Suppress' }).click();
    await page.getByText('Added 2 addresses.').waitFor();
    await page.getByRole('cell', { name: 'ada@example.org', exact: true }).waitFor();
    assert.ok(await suppressed('ada@example.org'));
    assert.ok(await suppressed('grace@example.org'));

    await page.getByLabel('Address', { exact: true }).fill('ada@example.org');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText(/ada@example\.org is suppressed \(manual, every stream\)/).waitFor();
    await page.getByLabel('Address', { exact: true }).fill('linus@example.org');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('linus@example.org is not suppressed: mail to it is sent.').waitFor();
    await screenshot(page, 'suppressions');
    await expectAccessible(page, 'Suppressions');
  });

  it('removes an address after asking once more', async () => {
    const { page } = browser;
    const row = page.getByRole('row', { name: /grace@example\.org/ });
    await row.getByRole('button', { name: 'Remove grace@example.org' }).click();
    await page.getByText('Send to grace@example.org again?').waitFor();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await page.getByRole('cell', { name: 'grace@example.org', exact: true }).waitFor({ state: 'detached' });
    assert.equal(await suppressed('grace@example.org'), false);
    assert.ok(await suppressed('ada@example.org'), 'the other entry stays');
  });

  it('imports a CSV file: header row skipped, an invalid address set aside, the rest added', async () => {
    const { page } = browser;
    const csv = [
      'email,note',
      '"Ken <ken@example.org>",old list',
      'not-an-address,typo',
      'ada@example.org,again',
      'barbara@example.org;x',
      '',
    ].join('\r\n');
    await page
      .getByLabel('CSV file with one address per row in the first column')
      .setInputFiles({ name: 'bounces.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page
      .getByText('bounces.csv: Added 2 addresses; 1 already listed; 1 not valid: not-an-address.')
      .waitFor();
    assert.ok(await suppressed('ken@example.org'));
    assert.ok(await suppressed('barbara@example.org'));
    await page.getByRole('cell', { name: 'barbara@example.org', exact: true }).waitFor();

    // The list filtered by reason, through the address.
    await page.getByRole('combobox', { name: 'Reason' }).selectOption('hard_bounce');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/reason=hard_bounce/);
    await page.getByText('No suppressions match these filters').waitFor();
  });
});
