import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium (apt-get install chromium): playwright-core drives it; its own browser
 * download (`npx playwright install`) is not used, so nothing is fetched but the system package.
 */
export const chromiumPath = () => ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

export const chromiumMissing = () => (chromiumPath() ? undefined : 'Chromium is not installed (apt-get install chromium)');

/**
 * Headless Chromium as root on a closed network: no sandbox (root), no GPU, and none of the
 * background connections (QUIC, updates, sync) that a machine with no network refuses by the
 * dozen. Playwright gives the browser a fresh profile of its own and removes it on close.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
