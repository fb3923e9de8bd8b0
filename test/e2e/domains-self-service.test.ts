import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  screenshot,
  signIn,
} from '../support/browser.ts';
import { publishRecords } from '../support/dns.ts';
import { call, mintToken, uniqueAccount, uniqueDomain } from '../support/host.ts';

/*
 * Self-service domains in Chromium (docs/domains.md): an account without a domain gets the hint,
 * adds a domain, sees every record with what DNS answered and the fix, downloads the zone fragment,
 * publishes the records, checks now and sees the domain verified, and switches receiving.
 */
let browser: ConsoleBrowser;
const account = uniqueAccount('e2e-dom');
const domain = uniqueDomain('e2e-dom');

beforeAll(async () => {
  browser = await openConsoleBrowser();
  await signIn(browser, { account, route: '#/activity' });
});

afterAll(async () => {
  await browser?.close();
});

describe('console: self-service domains', () => {
  it('tells an account without a domain to add one, then adds it and lists its records', async () => {
    const { page } = browser;
    await page.getByText('No sending domain yet?').waitFor();
    await page.getByRole('link', { name: 'Domains', exact: true }).first().click();
    await page.getByText('No domains yet').waitFor();
    await page.getByLabel('New domain').fill(domain);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { name: 'Records to publish' }).waitFor();
    assert.equal(await page.locator('tr.dns-record').count(), 4);
    const listed = page
      .getByRole('region', { name: 'Your domains' })
      .getByRole('row', { name: new RegExp(domain.replace(/\./g, '\\.')) });
    assert.match((await listed.textContent()) ?? '', /pending\s*not yet/);
    await screenshot(page, 'domains-self-service-added');
    await expectAccessible(page, 'Domains (added)');
  });

  it('shows what DNS answered with a plain-language fix, and the zone fragment', async () => {
    const { page } = browser;
    const token = await mintToken({ account });
    const view = (await call('POST', '/domain/query-1.0', { token, body: { domain } })).body.data.domain;
    const spf = view.records.find((record: { purpose: string }) => record.purpose === 'mail_from_spf');
    const mx = view.records.find((record: { purpose: string }) => record.purpose === 'mail_from_mx');
    publishRecords(spf.name, {
      txt: [[spf.value], ['v=spf1 mx ~all']],
      mx: [{ priority: 10, exchange: mx.value }],
    });
    await page.getByRole('button', { name: 'Check now' }).click();
    await page.getByText('We found 2 SPF records; keep one.').waitFor();
    await page.getByText('v=spf1 mx ~all').waitFor();
    await screenshot(page, 'domains-self-service-errors');

    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download BIND zone fragment' }).click();
    const file = await (await downloading).path();
    const zone = readFileSync(file, 'utf8');
    assert.match(zone, new RegExp(`bounce\\.${domain.replace(/\./g, '\\.')}\\.\\t3600\\tIN\\tMX\\t10 `));
    assert.match(zone, /IN\tTXT\t"v=DKIM1; k=rsa; p=/);
  });

  it('turns verified once the records are published, and switches receiving', async () => {
    const { page } = browser;
    const token = await mintToken({ account });
    const view = (await call('POST', '/domain/query-1.0', { token, body: { domain } })).body.data.domain;
    const byName = new Map<string, { txt: string[][]; mx: Array<{ priority: number; exchange: string }> }>();
    for (const record of view.records) {
      const entry = byName.get(record.name) ?? { txt: [], mx: [] };
      if (record.type === 'MX') entry.mx.push({ priority: 10, exchange: record.value });
      else entry.txt.push(record.value.match(/.{1,255}/g));
      byName.set(record.name, entry);
    }
    for (const [name, entry] of byName) publishRecords(name, entry);
    // A check on request is allowed once per 10 s per domain: retry until the answer is a fresh one.
    for (;;) {
      await page.getByRole('button', { name: 'Check now' }).click();
      await page
        .getByText('Sending ready.')
        .or(page.getByText(/checked a moment ago/))
        .first()
        .waitFor();
      if ((await page.getByText('Sending ready.').count()) > 0) break;
      await page.waitForTimeout(2_000);
    }
    await screenshot(page, 'domains-self-service-verified');
    await page.getByLabel('Receiving').click();
    await page.locator('tr.dns-record', { hasText: 'receiving mx' }).waitFor();
    await expectAccessible(page, 'Domains (verified)');
  });
});
