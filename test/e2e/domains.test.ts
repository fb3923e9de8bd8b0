import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  screenshot,
  signIn,
} from '../support/browser.ts';
import { type SendingDomain, sendingDomain } from '../support/delivery.ts';
import { call, uniqueDomain } from '../support/host.ts';

/*
 * The Domains page in Chromium: a domain whose DKIM record the test DNS server publishes (so its
 * status is verified), the record copied to the clipboard, an algorithm change previewed with a
 * dry run (which changes nothing) and then applied, and a domain that is not the account's.
 */
let browser: ConsoleBrowser;
let sending: SendingDomain;

async function dkim(): Promise<any> {
  const response = await call('GET', '/domain/dkim/status-1.0', {
    token: sending.token,
    query: { domain: sending.domain },
  });
  return response.body.data;
}

beforeAll(async () => {
  sending = await sendingDomain('rsa-sha256');
  browser = await openConsoleBrowser();
  await signIn(browser, { account: sending.account, route: '#/domains' });
});

afterAll(async () => {
  await browser?.close();
});

describe('console: Domains', () => {
  it('asks for a domain, then shows its DKIM records and their verified DNS status', async () => {
    const { page } = browser;
    await page.getByText('Choose a sending domain').waitFor();
    // "Your domains" loads on its own above the form and the records, and moves them when it
    // arrives: a click in that instant (a slow machine) would miss, so each step waits for it.
    const listLoaded = () => page.getByText('Loading your domains').waitFor({ state: 'detached' });
    await listLoaded();
    await screenshot(page, 'domains-empty');
    await expectAccessible(page, 'Domains (empty)');

    await page.getByLabel('Domain', { exact: true }).fill(sending.domain);
    await page.getByRole('button', { name: 'Show DKIM' }).click();
    await page.waitForURL(new RegExp(`domain=${sending.domain.replace(/\./g, '\\.')}`));
    await page.getByRole('heading', { name: sending.domain }).waitFor();
    const facts = page.locator('dl.facts');
    assert.match((await facts.textContent()) ?? '', /Algorithmrsa-sha256/);
    assert.match((await facts.textContent()) ?? '', /DNSverified/);
    await page.getByRole('heading', { name: sending.selector }).waitFor();
    await listLoaded();
    await screenshot(page, 'domains');
    await expectAccessible(page, 'Domains');
  });

  it('copies a DKIM record value and name to the clipboard exactly as the API gives them', async () => {
    const { page } = browser;
    const [key] = (await dkim()).dkim_keys;
    // The clipboard is written asynchronously: each button's own "Copied" says it is done.
    const copied = async (label: string) => {
      const button = page.getByRole('button', { name: label, exact: true });
      await button.click();
      await page.locator('span.copy', { has: button }).getByText('Copied').waitFor();
      return page.evaluate('navigator.clipboard.readText()');
    };
    assert.equal(await copied(`Copy the record value of ${key.selector}`), key.dns_value);
    assert.equal(await copied(`Copy the record name of ${key.selector}`), key.dns_name);
    assert.equal(
      await copied(`Copy the record value of ${key.selector} as quoted strings`),
      key.dns_value_chunks.map((chunk: string) => `"${chunk}"`).join(' '),
    );
  });

  it('previews an algorithm change with a dry run that changes nothing, then applies it', async () => {
    const { page } = browser;
    const before = await dkim();
    await page.getByRole('combobox', { name: 'Algorithm' }).selectOption('ed25519-sha256');
    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    await page.getByText('Dry run: nothing changed.').waitFor();
    await screenshot(page, 'domains-dry-run');
    assert.deepEqual(await dkim(), before, 'the dry run changed nothing');

    await page.getByRole('button', { name: 'Apply the change' }).click();
    await page.getByText(/New ed25519-sha256 key active: publish its TXT records \(two keys\) now/).waitFor();
    const after = await dkim();
    assert.equal(after.svc_config.dkim_algorithm, 'ed25519-sha256');
    assert.equal(after.svc_config.dkim_dns_status, 'pending', 'the new records are not published yet');
    await page.getByRole('heading', { name: after.svc_config.dkim_selector }).waitFor();
    assert.match((await page.locator('dl.facts').textContent()) ?? '', /DNSpending/);
    const retired = page.locator('section.record.retired');
    await retired.first().waitFor();
    assert.equal(await retired.count(), 1, 'the previous RSA key, retired');
    assert.equal(
      await page.locator('section.record.active').count(),
      2,
      'the Ed25519 key and its RSA companion',
    );
  });

  it('says so when the domain is not one of the account’s', async () => {
    const { page } = browser;
    const foreign = uniqueDomain('nobody');
    await page.goto(`${browser.consoleUrl}#/domains?domain=${foreign}`);
    await page.getByText(`${foreign} is not one of your domains`).waitFor();
    await screenshot(page, 'domains-not-found');
    await expectAccessible(page, 'Domains (not found)');
  });
});
