// Debian's Chromium driven by playwright-core, as every end-to-end suite of a screen uses it: no browser
// is downloaded, the profile is a fresh empty folder, and nothing reaches the internet.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';
import { CONSOLE_DIR } from '../../src/api/console/index.ts';

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
  /**
   * What any page or frame of the browser refused under its Content Security Policy, so far: a page of
   * Parley's that breaks its own policy is broken for its users (a suite fails on one).
   */
  cspViolations: string[];
  /** A new tab (its own session storage) of `width` × `height`. */
  page(size?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

const CSP_MARK = '[csp violation]';

export async function launchChromium(): Promise<Browser> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'parley-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 860 },
  });
  const cspViolations: string[] = [];
  // Each document reports its violations on the console, marked, from a script the page's own policy
  // does not govern (DevTools injects it); Chromium's own console lines about a policy count too.
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => console.error(${JSON.stringify(CSP_MARK)} + ' ' + e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') + ' in ' + e.documentURI));`,
  });
  context.on('console', (message) => {
    const text = message.text();
    if (text.startsWith(CSP_MARK) || /Content Security Policy/i.test(text)) cspViolations.push(text);
  });
  return {
    context,
    cspViolations,
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

/** A new tab of `browser` on the console at `url`, signed in with `token` by keyboard. */
export async function signInToConsole(
  browser: Browser,
  url: string,
  token: string,
  size?: { width: number; height: number },
): Promise<Page> {
  const page = await browser.page(size);
  await page.goto(url);
  await page.waitForURL(/\/console\/sign-in/);
  return typeToken(page, token, /\/console\/bots$/);
}

/**
 * A new tab of `browser` on the console page at `url` (a deep link: the sign-in page comes first),
 * signed in with `token` by keyboard, and back on that page.
 */
export async function signInToConsolePage(
  browser: Browser,
  url: string,
  token: string,
  size?: { width: number; height: number },
): Promise<Page> {
  const page = await browser.page(size);
  await page.goto(url);
  return typeToken(page, token, url);
}

/** Types `token` into the sign-in page by keyboard, and waits for the page it leads to. */
async function typeToken(page: Page, token: string, landing: string | RegExp): Promise<Page> {
  await page.getByLabel('Personal access token').fill(token);
  await page.keyboard.press('Enter');
  await page.waitForURL(landing);
  return page;
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

/**
 * Serves `server` on `localhost` while Parley is at 127.0.0.1: another origin for the browser (a shop
 * that embeds the webchat, a content origin). Answers its URL and how to close it.
 */
export function listenOnAnotherOrigin(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  return new Promise((resolve) => {
    server.listen(0, 'localhost', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://localhost:${port}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}

/** Builds the console (`scripts/build-console.mjs`) unless dist/console has it: the suites of its screens serve it. */
export function ensureConsoleBuilt(): void {
  if (existsSync(`${CONSOLE_DIR}/index.html`)) return;
  const build = spawnSync(process.execPath, ['scripts/build-console.mjs'], { encoding: 'utf8' });
  assert.equal(build.status, 0, build.stderr);
}
