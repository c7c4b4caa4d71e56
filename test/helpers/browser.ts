import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';

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
