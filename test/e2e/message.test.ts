import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  apiRequested,
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  type RemoteServer,
  screenshot,
  signIn,
  startRemoteServer,
} from '../support/browser.ts';
import { waitForStatus } from '../support/delivery.ts';
import { created, newAccount, type TestAccount } from '../support/messages.ts';

/*
 * The Message page in Chromium: a delivered message with its recipients, their events with the
 * receiving side's answer, tags, metadata and the status history; its content (a sandboxed
 * preview in which a script does not run and a remote image is not fetched until asked, the text,
 * the headers as sent, attachment and raw downloads); held mail released and cancelled from the
 * page; an unknown id.
 */
let browser: ConsoleBrowser;
let who: TestAccount;
/** Stands for the internet: every request a preview makes to it is recorded. */
let remote: RemoteServer;

beforeAll(async () => {
  who = await newAccount('e2e-msg');
  remote = await startRemoteServer();
  browser = await openConsoleBrowser();
  await signIn(browser, { account: who.account });
});

afterAll(async () => {
  await browser?.close();
  await remote?.close();
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
    const listed = page.getByRole('row', { name: /Your receipt/ });
    // The list is drawn again after Refresh: its link is clicked in the list the refresh drew, not
    // in the one being replaced (a click in that instant, on a slow machine, would be lost).
    await page.getByRole('button', { name: 'Refresh' }).waitFor();
    await page.getByText('Loading messages').waitFor({ state: 'detached' });
    const refreshed = page.waitForResponse((response) =>
      new URL(response.url()).pathname.endsWith('/message/query-1.0'),
    );
    await page.getByRole('button', { name: 'Refresh' }).click();
    await refreshed;
    // The list names the recipients, not only their count.
    assert.match((await listed.textContent()) ?? '', /ada@recipient\.test, grace@recipient\.test/);
    await page.getByRole('link', { name: 'Your receipt' }).click();
    await page.waitForURL(new RegExp(`#/message/${uuid}$`));
    await page.getByRole('heading', { name: /Your receipt/ }).waitFor();
    assert.equal(await statusBadge(browser).textContent(), 'delivered');

    const recipients = page.locator('table.list').first().locator('tbody tr');
    assert.equal(await recipients.count(), 2);
    const ada = recipients.filter({ hasText: 'ada@recipient.test' });
    assert.match((await ada.textContent()) ?? '', /Ada <ada@recipient\.test>\s*to\s*delivered/);
    const adaDetail = (await ada.locator('td.detail').textContent()) ?? '';
    assert.match(adaDetail, /delivered\s*250 /, 'the receiving server’s answer');
    const recipientAnswer = adaDetail.match(/delivered\s*(250 .*)$/)?.[1];
    // A final-hop relay answers once for sent and delivered: shown once.
    assert.ok(recipientAnswer !== undefined);
    assert.equal(adaDetail.split(recipientAnswer).length - 1, 1, `the SMTP answer once: ${adaDetail}`);
    const timeline = page.locator('ol.timeline li');
    const steps = await timeline.allTextContents();
    assert.ok(steps.length >= 3, steps.join(' | '));
    assert.match(steps[0] as string, /queued/);
    assert.match(steps.at(-1) as string, /delivered/);
    // Delivered once per recipient, and no entry of its own for the message.
    assert.equal(steps.filter((step) => /delivered/.test(step)).length, 2, steps.join(' | '));
    // The preview comes before the recipients and the history.
    const order = await page.locator('h2').allTextContents();
    assert.ok(order.indexOf('Content') < order.indexOf('Recipients'), order.join(' | '));
    await page.getByRole('cell', { name: 'X-Campaign', exact: true }).waitFor();
    // Sent, then delivered: wait for both (the row is drawn again when the page refreshes).
    await ada.locator('ol.events li').nth(1).waitFor();
    const adaEvents = await ada.locator('ol.events li').allTextContents();
    assert.ok(adaEvents.length >= 2, `sent, then delivered: ${adaEvents.join(' | ')}`);
    assert.match(adaEvents[0] as string, /sent/, 'accepted by the relay');
    assert.match(adaEvents.at(-1) as string, /delivered\s*250 /, 'the recipient server’s reply');
    assert.equal(await page.getByRole('button', { name: 'Release now' }).count(), 0, 'nothing to release');
    await page.getByRole('link', { name: 'Download the message (.eml)' }).waitFor();
    await screenshot(page, 'message');
    await expectAccessible(page, 'Message');
  });

  it('shows the content as sent: a sandboxed preview where a script does not run and a remote image is not fetched', async () => {
    const { page } = browser;
    const uuid = await created(who, {
      subject: 'Your invoice',
      tags: [{ name: 'category', value: 'invoice' }],
      metadata: { order_id: '4711' },
      content: {
        kind: 'mixed',
        text: 'Invoice 4711 is attached.',
        html:
          `<p id="greeting">Hello Ada,</p>` +
          `<script>document.getElementById('greeting').textContent = 'SCRIPT RAN'; new Image().src = '${remote.url}/script-ran';</script>` +
          `<img src="${remote.url}/logo.gif" alt="Logo">`,
      },
      attachments: [
        {
          filename: 'invoice.txt',
          content_type: 'text/plain',
          content: Buffer.from('total: 42').toString('base64'),
        },
      ],
    });
    await waitForStatus(who.token, uuid, ['delivered']);
    await page.goto(`${browser.consoleUrl}#/message/${uuid}`);
    await page.getByRole('heading', { name: /Your invoice/ }).waitFor();
    assert.equal(await page.getByRole('list', { name: 'Tags' }).textContent(), 'category: invoice');
    assert.equal(await page.getByRole('list', { name: 'Metadata' }).textContent(), 'order_id: 4711');

    const frame = page.frameLocator('iframe[title="Message HTML"]');
    await page.getByText('Remote images are blocked.').waitFor();
    await frame.locator('#greeting', { hasText: 'Hello Ada,' }).waitFor();
    // The text part is folded under the preview; each attachment is listed once.
    await page.getByText('Text part').click();
    await page.locator('pre.rendered-text', { hasText: 'Invoice 4711 is attached.' }).waitFor();
    assert.equal(await page.getByText('invoice.txt', { exact: true }).count(), 1, 'the attachment once');
    assert.equal(await frame.locator('#greeting').textContent(), 'Hello Ada,', 'the script did not run');
    assert.equal(
      remote.seen.length,
      0,
      `no request: neither the script nor the image ran (${remote.seen.join(', ')})`,
    );
    await page.getByText(/Every header as sent/).click();
    await page.getByRole('cell', { name: 'DKIM-Signature', exact: true }).waitFor();
    await screenshot(page, 'message-content');
    await expectAccessible(page, 'Message (content)');

    // The attachment and the whole message download from their (expiring) URLs.
    const attachment = page.getByRole('link', { name: 'invoice.txt' });
    const attachmentUrl = (await attachment.getAttribute('href')) as string;
    assert.equal(await (await fetch(attachmentUrl)).text(), 'total: 42');
    const rawUrl = (await page
      .getByRole('link', { name: /Download the message/ })
      .getAttribute('href')) as string;
    const raw = await (await fetch(rawUrl)).text();
    assert.match(raw, /^DKIM-Signature: /m);
    assert.match(raw, /Subject: Your invoice/);

    // The same image loads once asked, so the server above would have seen a request.
    await page.getByRole('button', { name: 'Load remote images' }).click();
    await remote.waitForRequest('/logo.gif');
    assert.equal(await frame.locator('#greeting').textContent(), 'Hello Ada,');
    assert.ok(!remote.seen.includes('/script-ran'), 'the script never ran');
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

  it("says in words that an unknown or another account's message does not exist, with a way back", async () => {
    const { page } = browser;
    const other = await newAccount('e2e-other');
    const foreign = await created(other, { scheduling: { mode: 'manual-wait' } });
    for (const uuid of [randomUUID(), foreign]) {
      // The alert of the uuid before stays on screen until the page has asked for this one.
      const asked = apiRequested(page, '/message/query-1.0', (body) => body.message_uuid === uuid);
      await page.goto(`${browser.consoleUrl}#/message/${uuid}`);
      await asked;
      await page.getByText(`This account has no message ${uuid}`).waitFor();
      assert.equal(await page.getByRole('heading', { name: 'No such message' }).count(), 1);
    }
    await page.getByRole('link', { name: 'Back to Activity' }).click();
    await page.waitForURL(/#\/activity/);
    await page.goto(`${browser.consoleUrl}#/message/${foreign}`);
    await page.getByRole('heading', { name: 'No such message' }).waitFor();
    await screenshot(page, 'message-not-found');
  });
});
