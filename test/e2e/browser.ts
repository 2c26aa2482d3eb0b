// Debian's Chromium driven by playwright-core, as every end-to-end suite of a screen uses it: no browser
// is downloaded, the profile is a fresh empty folder, and nothing reaches the internet.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** What the machine allows: no sandbox (root in a container), no GPU, no background traffic. */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  /** A new tab (its own session storage) of `width` × `height`. */
  page(size?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'parley-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 860 },
  });
  return {
    context,
    page: async (size) => {
      const page = await context.newPage();
      if (size) await page.setViewportSize(size);
      return page;
    },
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Screenshots of a suite, saved under test/e2e/artifacts/<suite>/ (git-ignored) to be looked at. */
export async function screenshots(suite: string): Promise<(page: Page, name: string) => Promise<void>> {
  const dir = path.resolve('test/e2e/artifacts', suite);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  return async (page, name) => {
    await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
  };
}
