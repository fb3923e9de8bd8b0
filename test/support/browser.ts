import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page, Request } from 'playwright-core';
import { launchChromium } from './chromium.ts';

export { type SignInChoice, signIn, waitForConsole } from './chromium.ts';

import { vi } from 'vitest';
import { hostInfo } from './host.ts';

/**
 * The console's end-to-end tests in Debian's Chromium (test/support/chromium.ts): a fresh profile
 * per browser, the sign-in through the local identity provider's page, an axe-core check and
 * screenshots.
 */
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
  const consoleUrl = new URL('/console/', hostInfo().url).href;
  const { context, close } = await launchChromium();
  context.setDefaultTimeout(actionTimeoutMs);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
    origin: new URL(consoleUrl).origin,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return { context, page, consoleUrl, close };
}

/**
 * Resolves once the page has sent a POST to the API route `path` whose JSON body `matches`.
 * Register it before the action: `goto`, `waitForURL` and a click return once the address has
 * changed, before the console has handled it, so a wait for content right after can still match
 * the page before. The console asks from layout effects that first show the loading state, so once
 * the request is out, the page shows that state or the new answer, never the previous one.
 */
export function apiRequested(
  page: Page,
  path: string,
  matches: (body: Record<string, unknown>) => boolean = () => true,
): Promise<Request> {
  return page.waitForRequest(
    (request) =>
      request.method() === 'POST' &&
      new URL(request.url()).pathname.endsWith(path) &&
      matches((request.postDataJSON() as Record<string, unknown> | null) ?? {}),
  );
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
export async function screenshot(page: Page, name: string, { fullPage = true } = {}): Promise<void> {
  const dir = process.env.CONSOLE_SCREENSHOTS_DIR ?? join(tmpdir(), 'svc-mail-console-screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage, animations: 'disabled' });
}

/** A local server that stands for the internet in the preview tests: it records every request. */
export interface RemoteServer {
  url: string;
  /** The paths requested so far, in order. */
  seen: string[];
  /** Waits (generously) until `path` has been requested. */
  waitForRequest(path: string): Promise<void>;
  close(): Promise<void>;
}

export async function startRemoteServer(): Promise<RemoteServer> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(request.url ?? '');
    response
      .writeHead(200, { 'content-type': 'image/gif' })
      .end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    async waitForRequest(path) {
      await vi.waitFor(() => assert.ok(seen.includes(path), `${path} is requested: ${seen.join(', ')}`), {
        timeout: 30_000,
        interval: 100,
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
