import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  type ConsoleBrowser,
  expectAccessible,
  openConsoleBrowser,
  type RemoteServer,
  screenshot,
  signIn,
  startRemoteServer,
} from '../support/browser.ts';
import { call, mintToken, uniqueAccount } from '../support/host.ts';

/*
 * The Templates page in Chromium: a template created and edited with the live preview (rendered by
 * the API), a script in the HTML that does not run and a remote image that is not fetched until
 * asked (a local server that must see no request), drafts, publishing, history and rollback.
 */
let browser: ConsoleBrowser;
const account = uniqueAccount('e2e-tpl');
let token: string;
/** Stands for the internet: every request a preview makes to it is recorded. */
let remote: RemoteServer;

async function stored(alias: string): Promise<any> {
  const response = await call('POST', '/template/query-1.0', { token, body: { alias } });
  return response.body.data.template;
}

beforeAll(async () => {
  token = await mintToken({ account });
  remote = await startRemoteServer();
  browser = await openConsoleBrowser();
  await signIn(browser, { account, route: '#/templates' });
});

afterAll(async () => {
  await browser?.close();
  await remote?.close();
});

describe('console: Templates', () => {
  it('creates a template that opens with the suggested model filled in, and previews it live with its errors', async () => {
    const { page } = browser;
    await page.getByText('No templates yet').waitFor();
    await screenshot(page, 'templates-empty');
    await expectAccessible(page, 'Templates (empty)');

    await page.getByLabel('Alias').fill('welcome');
    await page.getByLabel('Name', { exact: true }).fill('Welcome mail');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/#\/templates\/welcome$/);
    await page.getByRole('heading', { name: /Welcome mail/ }).waitFor();

    // The editor opens with the suggested model filled in: no error, never a red first view.
    await page.getByText('No errors.').waitFor();
    assert.equal(await page.getByRole('list', { name: 'Template errors' }).count(), 0);
    assert.ok(JSON.parse(await page.getByLabel('Model (JSON)').inputValue()).name !== undefined);
    await screenshot(page, 'template-new');
    // A model without `name`: the API's render answers it as an error, with the part and line.
    await page.getByLabel('Model (JSON)').fill('{}');
    const errors = page.getByRole('list', { name: 'Template errors' });
    await errors.waitFor();
    assert.match((await errors.textContent()) ?? '', /subject line 1 name is not in the model/);
    await page.getByRole('button', { name: 'Use the suggested model' }).click();
    await page.getByText('No errors.').waitFor();
    await page.getByLabel('Model (JSON)').fill('{"name": "Ada"}');
    await page.locator('.rendered-subject', { hasText: 'Hello Ada' }).waitFor();
    const frame = page.frameLocator('iframe[title="Rendered HTML"]');
    await frame.getByText('Hello Ada,').waitFor();
  });

  it('runs no script of the HTML and fetches no remote image until asked', async () => {
    const { page } = browser;
    await page
      .getByLabel('HTML', { exact: true })
      .fill(
        `<p id="greeting">Hello {{name}},</p>` +
          `<script>document.getElementById('greeting').textContent = 'SCRIPT RAN'; new Image().src = '${remote.url}/script-ran';</script>` +
          `<img src="${remote.url}/logo.gif" alt="Logo">`,
      );
    const frame = page.frameLocator('iframe[title="Rendered HTML"]');
    await page.getByText('Remote images are blocked.').waitFor();
    await frame.locator('#greeting', { hasText: 'Hello Ada,' }).waitFor();
    await screenshot(page, 'template-editor');
    await expectAccessible(page, 'Template editor');
    assert.equal(await frame.locator('#greeting').textContent(), 'Hello Ada,', 'the script did not run');
    assert.equal(
      remote.seen.length,
      0,
      `no request: neither the script nor the image reached the network (${remote.seen.join(', ')})`,
    );

    // The same image loads once asked, so the server above would have seen a request.
    await page.getByRole('button', { name: 'Load remote images' }).click();
    await page.getByText('Remote images are shown').waitFor();
    await remote.waitForRequest('/logo.gif');
    assert.equal(await frame.locator('#greeting').textContent(), 'Hello Ada,');
    assert.ok(!remote.seen.includes('/script-ran'), 'the script never ran');
  });

  it('saves drafts, publishes, and rolls back to an older version', async () => {
    const { page } = browser;
    await page.getByLabel('HTML', { exact: true }).fill('<p>Welcome, {{name}}!</p>');
    await page.getByRole('button', { name: 'Save as a new draft' }).click();
    await page.getByText('Saved as version 2 (a draft).').waitFor();
    await page.getByRole('button', { name: 'Publish version 2', exact: true }).first().click();
    await page.getByText(/Version 2 is published/).waitFor();
    assert.equal((await stored('welcome')).published_version, 2);

    await page.getByLabel('Subject').fill('Welcome aboard, {{name}}');
    await page.getByRole('button', { name: 'Save as a new draft' }).click();
    await page.getByText('Saved as version 3 (a draft).').waitFor();
    await page.getByRole('button', { name: 'Publish version 3', exact: true }).first().click();
    await page.getByText(/Version 3 is published/).waitFor();

    // Rollback: version 2, now superseded, is published again.
    const row = page.getByRole('row', { name: /version 2/ });
    await row.getByRole('button', { name: 'Publish version 2' }).click();
    await page.getByText(/Version 2 is published/).waitFor();
    const template = await stored('welcome');
    assert.equal(template.published_version, 2);
    assert.deepEqual(
      template.versions.map((version: { version: number; status: string }) => [
        version.version,
        version.status,
      ]),
      [
        [3, 'superseded'],
        [2, 'published'],
        [1, 'draft'],
      ],
    );
    await page.getByRole('link', { name: 'Templates' }).first().click();
    await page.getByRole('link', { name: 'welcome' }).waitFor();
    await screenshot(page, 'templates');
    await expectAccessible(page, 'Templates');
  });

  it('answers an alias the account does not have', async () => {
    const { page } = browser;
    await page.goto(`${browser.consoleUrl}#/templates/nothing-here`);
    await page.getByText('There is no template nothing-here').waitFor();
  });
});
