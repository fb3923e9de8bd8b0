import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  screenshot,
  signIn,
} from '../support/browser.ts';
import { call } from '../support/host.ts';
import { newAccount, type TestAccount, textMessage } from '../support/messages.ts';

/*
 * The API keys page in Chromium: a sending key made from the page for one domain (its secret shown
 * once, copied with the button), used to send, listed with its last use, rotated and revoked.
 */
let browser: ConsoleBrowser;
let who: TestAccount;

beforeAll(async () => {
  who = await newAccount('e2e-key');
  browser = await openConsoleBrowser();
  await signIn(browser, { account: who.account, route: '#/apikeys' });
});

afterAll(async () => {
  await browser?.close();
});

describe('console: API keys', () => {
  let key: string;

  it('makes a key and shows its secret once, with a copy button and a warning', async () => {
    const { page } = browser;
    await page.getByText('No API keys').waitFor();
    await screenshot(page, 'apikeys-empty');
    await expectAccessible(page, 'API keys (empty)');

    await page.getByLabel('Name').fill('Checkout service');
    await page.getByLabel('Access').selectOption('sending_access');
    await page.getByLabel('Domains (optional)').fill(who.domain);
    await page.getByLabel('Expires (optional)').fill('2099-01-01T12:00');
    await page.getByRole('button', { name: 'Make key' }).click();
    await page.getByText('Key Checkout service made.').waitFor();
    await page.getByText('this is the only time it is shown').waitFor();
    key = (await page.locator('code.secret').textContent()) ?? '';
    assert.match(key, /^svc_live_[a-z2-7]{16}_[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Copy the API key' }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), key);
    const row = page.getByRole('row', { name: /Checkout service/ });
    assert.match(
      (await row.textContent()) ?? '',
      new RegExp(`messages:send.*${who.domain.replace(/\./g, '\\.')}`),
    );
    await screenshot(page, 'apikeys');
    await expectAccessible(page, 'API keys');
  });

  it('the key sends, and the list shows its last use', async () => {
    const { page } = browser;
    const sent = await call('POST', '/message/add-1.0', { token: key, body: textMessage(who) });
    assert.equal(sent.status, 200, sent.text);
    // last_used_at is written beside the request: reload until the list shows it.
    await expect
      .poll(
        async () => {
          await page.reload();
          const row = page.getByRole('row', { name: /Checkout service/ });
          await row.waitFor();
          return (await row.locator('td').nth(5).textContent())?.trim();
        },
        { timeout: 60_000, interval: 1_000 },
      )
      .not.toBe('—');
  });

  it('rotates with the grace the user picks, and says when the old secret stops', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Rotate Checkout service' }).click();
    const grace = page.getByLabel('Old secret of Checkout service keeps working for');
    assert.deepEqual(await grace.locator('option').allTextContents(), [
      'none (stops within 30 seconds)',
      '1 hour',
      '24 hours',
      '7 days',
    ]);
    await grace.selectOption({ label: '24 hours' });
    await screenshot(page, 'apikeys-rotate-grace');
    const picked = Date.now();
    await page.getByRole('button', { name: 'Yes, rotate' }).click();
    await page.getByText('New secret for Checkout service.').waitFor();
    const rotated = (await page.locator('code.secret').textContent()) ?? '';
    assert.notEqual(rotated, key);
    assert.equal(rotated.slice(0, 26), key.slice(0, 26), 'same key id');
    const until = Date.parse((await page.locator('.old-secret time').getAttribute('datetime')) ?? '');
    const day = 86_400_000;
    assert.ok(until >= picked + day && until <= Date.now() + day, `old secret until ${until}`);
    assert.equal(
      (await call('GET', '/whoami-1.0', { token: key })).status,
      200,
      'the old secret, in its grace',
    );
    assert.equal((await call('GET', '/whoami-1.0', { token: rotated })).status, 200);
    await screenshot(page, 'apikeys-rotated');
    key = rotated;
  });

  it('rotates with no grace: the old secret stops', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Rotate Checkout service' }).click();
    await page
      .getByLabel('Old secret of Checkout service keeps working for')
      .selectOption({ label: 'none (stops within 30 seconds)' });
    await page.getByRole('button', { name: 'Yes, rotate' }).click();
    await page.getByText('The old secret stops working within 30 seconds.').waitFor();
    const rotated = (await page.locator('code.secret').textContent()) ?? '';
    assert.notEqual(rotated, key);
    // The host's key cache keeps the old record up to 30 s: poll the refusal, as a client would see it.
    await expect
      .poll(async () => (await call('GET', '/whoami-1.0', { token: key })).status, {
        timeout: 45_000,
        interval: 1_000,
      })
      .toBe(401);
    assert.equal((await call('GET', '/whoami-1.0', { token: rotated })).status, 200);
  });

  it('revokes', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Revoke Checkout service' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByRole('row', { name: /Checkout service.*revoked/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Revoke Checkout service' }).count(), 0);
    await screenshot(page, 'apikeys-revoked');
    await expectAccessible(page, 'API keys (revoked)');
  });
});
