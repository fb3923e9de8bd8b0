import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { hostInfo } from './host.ts';

/**
 * Debian's Chromium (package `chromium`, never a downloaded browser) driven by playwright-core,
 * for the console's end-to-end tests: a fresh profile per browser, flags for a closed network,
 * the sign-in through the local identity provider's page, an axe-core check and screenshots.
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
/** Actions wait for the page this long: generous, for a loaded 2-core machine. */
const actionTimeoutMs = 60_000;

export interface ConsoleBrowser {
  context: BrowserContext;
  page: Page;
  /** The console on the run's local host: `http://127.0.0.1:<port>/console/`. */
  consoleUrl: string;
  close(): Promise<void>;
}

export async function openConsoleBrowser(): Promise<ConsoleBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-mail-chromium-'));
  const consoleUrl = new URL('/console/', hostInfo().url).href;
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
  });
  context.setDefaultTimeout(actionTimeoutMs);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
    origin: new URL(consoleUrl).origin,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    consoleUrl,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
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
export async function signIn(browser: ConsoleBrowser, choice: SignInChoice): Promise<void> {
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
export async function waitForConsole({ page, consoleUrl }: ConsoleBrowser): Promise<void> {
  await page.waitForURL((url) => url.href.startsWith(consoleUrl) && !url.searchParams.has('code'));
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResult {
  violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown }> }>;
}

/**
 * Runs axe-core on the page as it is and fails on any serious or critical violation. axe is loaded
 * through the DevTools protocol, so the page's Content-Security-Policy stays in force.
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  // Strings, not functions: this file is type-checked without the DOM library.
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(axeSource);
  const result = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'], iframes: false })",
  )) as AxeResult;
  const serious = result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${JSON.stringify(violation.nodes.map((node) => node.target))}`,
    );
  assert.deepEqual(serious, [], `accessibility of ${what}`);
}

/**
 * A full-page screenshot. `CONSOLE_SCREENSHOTS_DIR=docs/console` (npm run console:screenshots)
 * writes them where docs/console.md shows them; otherwise they go to a temporary folder, so a
 * test run does not rewrite the documentation.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.CONSOLE_SCREENSHOTS_DIR ?? join(tmpdir(), 'svc-mail-console-screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true, animations: 'disabled' });
}
