// The attack of issue 29, in Debian's Chromium: a bot uploads an HTML page, an SVG picture and a file
// declared text/html, each with a script that reads localStorage and sessionStorage, reaches into the
// window that opened it, opens a console window, and posts what it found to its opener. An operator
// signed in to the console opens the file's link (as a click on it in a conversation would), in the
// browser where a webchat share page stored its end user's key. The script must not run, or run only in
// an opaque origin of its own, and read nothing.
//
// That the test can fail: each case first opens the same link with the protective headers taken off the
// real answer (a route of the browser), and expects the script to read what it can there: on Parley's
// origin, the console's token and the webchat user's key. And it was run against the real answers
// without the headers (src/api/files/content.ts sending neither nosniff nor the CSP, and every
// disposition inline): all six cases failed, the three on Parley's origin with a report holding the
// webchat's user token (localStorage) and the console's token (sessionStorage copied into the window the
// console opened, opener.sessionStorage, and a console window the script opened itself).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { CONSOLE_DIR } from '../../src/api/console/index.ts';
import { WEBCHAT_DIR } from '../../src/api/webchat/assets.ts';
import { createTestBot, waitFor } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { webchatClientId } from '../helpers/webchat.ts';
import { launchChromium, listenOnAnotherOrigin } from './browser.ts';
import type { Browser } from './browser.ts';

/** What the attacker's script does, wherever it runs: every read tried, what it got posted to its opener. */
const STEAL = `(function () {
  var found = { origin: String(location.origin) };
  function read(name, f) { try { found[name] = f(); } catch (e) { found[name] = 'refused: ' + e.name; } }
  read('local', function () { return JSON.stringify(localStorage); });
  read('session', function () { return JSON.stringify(sessionStorage); });
  read('opener', function () { return JSON.stringify(opener.sessionStorage); });
  read('openerPage', function () { return opener.document.documentElement.outerHTML.length; });
  read('popup', function () {
    var w = window.open('/console/bots', 'stolen-console');
    return w ? JSON.stringify(w.sessionStorage) : 'no window';
  });
  try { opener.postMessage({ stolen: JSON.stringify(found) }, '*'); } catch (e) {}
})();`;

const ATTACKS = [
  {
    name: 'an HTML upload',
    key: 'attack/page.html',
    content: `<!doctype html><p>hello</p><script>${STEAL}</script>`,
  },
  {
    name: 'an SVG upload',
    key: 'attack/logo.svg',
    content: `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>${STEAL}</script></svg>`,
  },
  {
    name: 'a file declared text/html',
    key: 'attack/report.pdf',
    contentType: 'text/html; charset=utf-8',
    content: `<p>not a pdf</p><script>${STEAL}</script>`,
  },
];

const PROTECTIVE_HEADERS = ['content-security-policy', 'content-disposition', 'x-content-type-options'];

/** Another origin in front of Parley, as a content origin is: requests forwarded with their Host. */
function contentProxy(target: () => string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const upstream = new URL(target());
    const forwarded = http.request(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.writeHead(502).end());
    req.pipe(forwarded);
  });
  return listenOnAnotherOrigin(server);
}

describe('uploaded files cannot read what Parley’s pages keep (sqlite, Chromium)', () => {
  let browser: Browser;
  let proxy: { url: string; close(): Promise<void> };
  let t: TestServer;
  let separate: TestServer;

  before(async () => {
    for (const [dir, script, marker] of [
      [CONSOLE_DIR, 'scripts/build-console.mjs', 'index.html'],
      [WEBCHAT_DIR, 'scripts/build-webchat.mjs', 'manifest.json'],
    ] as const) {
      if (existsSync(`${dir}/${marker}`)) continue;
      const build = spawnSync(process.execPath, [script], { encoding: 'utf8' });
      assert.equal(build.status, 0, build.stderr);
    }
    t = await startTestServer({ name: 'sqlite' });
    proxy = await contentProxy(() => separate.url);
    separate = await startTestServer({ name: 'sqlite' }, { contentUrl: proxy.url });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await proxy?.close();
    await t?.close();
    await separate?.close();
  });

  interface Victim {
    chat: Page;
    console: Page;
    /** What a script on Parley's origin could steal: the console's token, the webchat user's key. */
    secrets: string[];
  }

  /**
   * A webchat share page of another bot that stored its user's key, and a console tab signed in, in
   * one browser.
   */
  async function victim(server: TestServer): Promise<Victim> {
    const { bot } = await server.client().createBot({ name: 'victim' });
    const clientId = await webchatClientId(server, bot.id);
    const chat = await browser.page();
    await chat.goto(`${server.url}/s/${clientId}`);
    await chat.getByRole('textbox').waitFor();
    // The official webchat keeps its user's token (the user key) in localStorage.
    const userKey = await waitFor('the webchat to store its user', async () => {
      const value: unknown = await chat.evaluate(`localStorage.getItem('parley-webchat-${clientId}-client')`);
      return typeof value === 'string' ? /"userToken":"([^"]+)"/.exec(value)?.[1] : undefined;
    });
    const page = await browser.page();
    await page.goto(`${server.url}/console/`);
    await page.getByLabel('Personal access token').fill(server.token);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/bots$/);
    await page.evaluate(
      "window.stolen = []; window.addEventListener('message', (e) => { if (e.data && e.data.stolen) window.stolen.push(e.data.stolen); })",
    );
    return { chat, console: page, secrets: [server.token, userKey] };
  }

  /** Opens `url` from the console tab as a click on a link would; answers what the script posted back. */
  async function openFromConsole(v: Victim, url: string, posted: 'posts' | 'silent'): Promise<string[]> {
    await v.console.evaluate('window.stolen = []');
    const open = new Set(browser.context.pages());
    const [popup] = await Promise.all([
      v.console.waitForEvent('popup'),
      v.console.evaluate(`window.open(${JSON.stringify(url)})`),
    ]);
    if (posted === 'posts') {
      // Polled from outside: the console's policy refuses the eval of waitForFunction.
      await waitFor('the script to post what it read', async () =>
        Number(await v.console.evaluate('window.stolen.length')) > 0 ? true : undefined,
      );
    } else {
      // Give a script that would run the time it took in the control cases many times over (there,
      // well under a second): the popup's document has loaded (or its download has begun) by then.
      await popup.waitForLoadState('load').catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
    const stolen: unknown = await v.console.evaluate('window.stolen');
    // The file's window, and any the script opened.
    for (const page of browser.context.pages()) if (!open.has(page)) await page.close();
    assert.ok(Array.isArray(stolen));
    return stolen.map(String);
  }

  /** Opens `url` with the protective headers taken off Parley's answer. */
  async function withoutProtection<T>(url: string, run: () => Promise<T>): Promise<T> {
    const pattern = `${new URL(url).origin}${new URL(url).pathname}*`;
    await browser.context.route(pattern, async (route) => {
      const response = await route.fetch();
      const headers = Object.fromEntries(
        Object.entries(response.headers()).filter(([name]) => !PROTECTIVE_HEADERS.includes(name)),
      );
      await route.fulfill({ response, headers });
    });
    try {
      return await run();
    } finally {
      await browser.context.unroute(pattern);
    }
  }

  const containsAny = (reports: string[], secrets: string[]) =>
    secrets.filter((secret) => reports.some((report) => report.includes(secret)));

  for (const attack of ATTACKS) {
    test(`${attack.name} on Parley’s origin is saved, not run: it reads nothing`, async () => {
      const bot = await createTestBot(t, 'attacker');
      await bot.client.uploadFile({
        key: attack.key,
        content: attack.content,
        contentType: attack.contentType,
      });
      const { file } = await bot.client.getFile({ id: attack.key });
      assert.equal(new URL(file.url).origin, t.url, 'served from Parley’s own origin');
      const v = await victim(t);

      const unprotected = await withoutProtection(file.url, () => openFromConsole(v, file.url, 'posts'));
      assert.deepEqual(
        containsAny(unprotected, v.secrets),
        v.secrets,
        `without the headers the script reads the console's token and the user's key: ${unprotected.join()}`,
      );

      const stolen = await openFromConsole(v, file.url, 'silent');
      assert.deepEqual(stolen, [], 'the script did not run');
      await v.console.close();
      await v.chat.close();
    });
  }

  for (const attack of ATTACKS) {
    test(`${attack.name} on a content origin of its own is shown sandboxed: its script does not run`, async () => {
      const bot = await createTestBot(separate, 'attacker');
      // uploadFile's two steps: the PUT goes to the content origin, through the proxy.
      const { file } = await bot.client.upsertFile({
        key: attack.key,
        size: Buffer.byteLength(attack.content),
        contentType: attack.contentType,
      });
      assert.equal(new URL(file.uploadUrl).origin, proxy.url);
      const put = await fetch(file.uploadUrl, { method: 'PUT', body: attack.content });
      assert.equal(put.status, 200);
      const { file: uploaded } = await bot.client.getFile({ id: attack.key });
      const v = await victim(separate);

      // Without the sandbox the script runs, but in the content origin: Parley's storage and windows
      // are another origin's, so it reads nothing of them.
      const unsandboxed = await withoutProtection(uploaded.url, () =>
        openFromConsole(v, uploaded.url, 'posts'),
      );
      assert.equal(unsandboxed.length, 1, 'the script ran');
      assert.deepEqual(containsAny(unsandboxed, v.secrets), []);
      assert.match(unsandboxed[0] ?? '', /"opener":"refused: SecurityError"/);

      const shown = await openFromConsole(v, uploaded.url, 'silent');
      assert.deepEqual(shown, [], 'the sandboxed script did not run');
      // The old address on the main origin leads there too.
      const mainOrigin = `${separate.url}${new URL(uploaded.url).pathname}${new URL(uploaded.url).search}`;
      assert.deepEqual(await openFromConsole(v, mainOrigin, 'silent'), []);
      await v.console.close();
      await v.chat.close();
    });
  }
});
