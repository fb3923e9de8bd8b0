import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Debian's Chromium (package `chromium`; never a downloaded browser) for the console's end-to-end
 * tests and its benchmark: headless, with a fresh profile, and flags for a closed network (no
 * QUIC, no background or component updates, no sync). No vitest here: the benchmark imports it.
 */
export const chromiumPath = '/usr/bin/chromium';
export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-mail-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A page showing (or about to show) the console at `consoleUrl`. */
export interface ConsolePage {
  page: Page;
  consoleUrl: string;
}

export interface SignInChoice {
  account: string;
  /** Scopes to keep checked on the login page (default: all the console asks for). */
  scopes?: readonly string[];
  /** Session length in seconds, one of the page's choices (default: one hour). */
  lifetime?: number;
  /** Hash route to open, e.g. `#/activity` (default). */
  route?: string;
}

/**
 * Opens the console without a session: it goes to the identity provider by itself; the login page
 * is filled in as a person would, and the console comes back on the route it was opened with.
 */
export async function signIn(browser: ConsolePage, choice: SignInChoice): Promise<void> {
  const { page, consoleUrl } = browser;
  await page.goto(`${consoleUrl}${choice.route ?? '#/activity'}`);
  await page.waitForURL(/\/interaction\//);
  await page.getByLabel('Account').fill(choice.account);
  if (choice.scopes !== undefined) {
    for (const box of await page.locator('input[name=scope]').all()) {
      const scope = (await box.getAttribute('value')) as string;
      await box.setChecked(choice.scopes.includes(scope));
    }
  }
  if (choice.lifetime !== undefined)
    await page.getByLabel('Session length').selectOption(String(choice.lifetime));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await waitForConsole(browser);
}

/** Waits until the console shows a page (signed in, the code gone from the address). */
export async function waitForConsole({ page, consoleUrl }: ConsolePage): Promise<void> {
  await page.waitForURL((url) => url.href.startsWith(consoleUrl) && !url.searchParams.has('code'));
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}
