import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { newAddress } from './admin.js';
import { backend } from './backend.js';

/** Where the browser tests leave a screenshot of each main screen (a CI artifact; build/ is ignored by git). */
export const SCREENSHOTS = path.join(import.meta.dirname, '..', '..', 'build', 'screenshots');

/** Debian's Chromium (or CHROMIUM_PATH); undefined when there is none. */
export function findChromium(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => Boolean(p));
  return candidates.find((p) => fs.existsSync(p));
}

/**
 * Headless Chromium with the flags this closed network needs (without the networking ones it
 * stalls looking for Google's hosts). Playwright gives it a new empty profile.
 */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Skips the calling suite, saying so, when no Chromium is installed; with REQUIRE_BROWSER=true
 * (as `.ci/run` sets) a missing Chromium fails instead.
 */
export function chromiumOrSkip(suite: Mocha.Context): string {
  const found = findChromium();
  if (found) return found;
  if (process.env.REQUIRE_BROWSER === 'true') throw new Error('REQUIRE_BROWSER=true but no Chromium was found: apt-get install -y chromium');
  console.log('    (browser tests skipped: no Chromium found; apt-get install -y chromium, or set CHROMIUM_PATH)');
  suite.skip();
  return '';
}

/** Chromium for a suite (skipping it, or failing under REQUIRE_BROWSER, without one), and this backend's screenshots folder. */
export async function suiteBrowser(suite: Mocha.Context): Promise<{ browser: Browser; shots: string }> {
  const executable = chromiumOrSkip(suite);
  // A folder per backend (embedded, mysql, postgres): two suites may run side by side.
  const shots = path.join(SCREENSHOTS, backend().kind);
  fs.mkdirSync(shots, { recursive: true });
  return { browser: await launchChromium(executable), shots };
}

/**
 * A fresh browser profile at 1280 px on `url` (with an X-Forwarded-For of its own, so throttled
 * sign-ins stay in their test), its page signed in as `person` at `hash` of the Developer page.
 */
export async function signedInPage(browser: Browser, url: string, person: { email: string; password: string }, hash = ''): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: url, extraHTTPHeaders: { 'x-forwarded-for': newAddress() } });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  await page.goto(`/admin/${hash}`);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return { context, page };
}

/** For afterEach: a picture of where a failed test stopped, beside the suite's screens. */
export async function shootFailure(test: Mocha.Test | undefined, page: Page | undefined, shots: string): Promise<void> {
  if (test?.state === 'failed' && page) await page.screenshot({ path: path.join(shots, `failed-${test.title.replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
}
