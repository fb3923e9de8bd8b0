import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  screenshot,
  signIn,
} from '../support/browser.ts';
import { waitForStatus } from '../support/delivery.ts';
import { created, newAccount, type TestAccount } from '../support/messages.ts';

/*
 * The Message page in Chromium: a delivered message with its recipients, the receiving side's
 * answer and the status history; held mail released and cancelled from the page; an unknown id.
 */
let browser: ConsoleBrowser;
let who: TestAccount;

beforeAll(async () => {
  who = await newAccount('e2e-msg');
  browser = await openConsoleBrowser();
  await signIn(browser, { account: who.account });
});

afterAll(async () => {
  await browser?.close();
});

const statusBadge = (browser: ConsoleBrowser) => browser.page.locator('h1 .badge');

describe('console: Message', () => {
  it('opens a delivered message from Activity: recipients with the receiving side, status history', async () => {
    const { page } = browser;
    const uuid = await created(who, {
      subject: 'Your receipt',
      to: ['Ada <ada@recipient.test>'],
      cc: ['grace@recipient.test'],
      headers: { 'X-Campaign': 'receipts' },
    });
    await waitForStatus(who.token, uuid, ['delivered']);
    await page.goto(`${browser.consoleUrl}#/activity`);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('link', { name: 'Your receipt' }).click();
    await page.waitForURL(new RegExp(`#/message/${uuid}$`));
    await page.getByRole('heading', { name: /Your receipt/ }).waitFor();
    assert.equal(await statusBadge(browser).textContent(), 'delivered');

    const recipients = page.locator('table.list').first().locator('tbody tr');
    assert.equal(await recipients.count(), 2);
    const ada = recipients.filter({ hasText: 'ada@recipient.test' });
    assert.match((await ada.textContent()) ?? '', /Ada <ada@recipient\.test>\s*to\s*delivered/);
    assert.match(
      (await ada.locator('td.detail').textContent()) ?? '',
      /^250 /,
      'the receiving server’s answer',
    );
    const timeline = page.locator('ol.timeline li');
    const steps = await timeline.allTextContents();
    assert.ok(steps.length >= 3, steps.join(' | '));
    assert.match(steps[0] as string, /queued/);
    assert.match(steps.at(-1) as string, /delivered/);
    await page.getByRole('cell', { name: 'X-Campaign' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Release now' }).count(), 0, 'nothing to release');
    await screenshot(page, 'message');
    await expectAccessible(page, 'Message');
  });

  it('releases a held message, which is then sent', async () => {
    const { page } = browser;
    const uuid = await created(who, { subject: 'Held for review', scheduling: { mode: 'manual-wait' } });
    await page.goto(`${browser.consoleUrl}#/message/${uuid}`);
    await page.getByText('This message is held until you release or cancel it.').waitFor();
    assert.equal(await statusBadge(browser).textContent(), 'waiting');
    await screenshot(page, 'message-held');
    await expectAccessible(page, 'Message (held)');

    await page.getByRole('button', { name: 'Release now' }).click();
    await page.getByText(/Released: the message is queued/).waitFor();
    const delivered = await waitForStatus(who.token, uuid, ['delivered']);
    assert.ok(delivered.status_history.some((entry: { status: string }) => entry.status === 'waiting'));
    await page.reload();
    await page.locator('h1 .badge', { hasText: 'delivered' }).waitFor();
  });

  it('cancels a scheduled message after asking once more', async () => {
    const { page } = browser;
    const sendAt = new Date(Date.now() + 3 * 24 * 3600_000).toISOString();
    const uuid = await created(who, { subject: 'Later', scheduling: { mode: 'scheduled', send_at: sendAt } });
    await page.goto(`${browser.consoleUrl}#/message/${uuid}`);
    await page.getByText('This message is scheduled: send it now or cancel it.').waitFor();
    await page.getByRole('button', { name: 'Cancel message' }).click();
    await page.getByText('Cancel this message for good?').waitFor();
    await page.getByRole('button', { name: 'Yes, cancel message' }).click();
    await page.getByText('Cancelled: it will never be sent.').waitFor();
    await page.locator('h1 .badge', { hasText: 'cancelled' }).waitFor();
    const after = await waitForStatus(who.token, uuid, ['cancelled'], 10_000);
    assert.equal(after.status, 'cancelled');
    assert.equal(await page.getByRole('button', { name: 'Release now' }).count(), 0);
  });

  it("answers an unknown or another account's message with the API's 112", async () => {
    const { page } = browser;
    const other = await newAccount('e2e-other');
    const foreign = await created(other, { scheduling: { mode: 'manual-wait' } });
    for (const uuid of [randomUUID(), foreign]) {
      await page.goto(`${browser.consoleUrl}#/message/${uuid}`);
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match((await alert.textContent()) ?? '', /Error 112/);
    }
    await screenshot(page, 'message-not-found');
  });
});
