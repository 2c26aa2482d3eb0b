// The webchat as a site's visitors meet it, in Debian's Chromium: a shop page on another origin embeds the
// embed script; the share link; the official React webchat from npm, unmodified, on another origin (CORS).
// Bots deployed with the CLI answer; what happened is read back through the Runtime API. Every screen is
// saved under test/e2e/artifacts/webchat/ to be looked at.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as esbuild from 'esbuild';
import type { FrameLocator, Page } from 'playwright-core';
import { WEBCHAT_DIR } from '../../src/api/webchat/assets.ts';
import { deployWithCli } from '../helpers/chat-bots.ts';
import { deployPackage } from '../helpers/deployed-bots.ts';
import type { DeployedBot } from '../helpers/deployed-bots.ts';
import { waitFor } from '../helpers/runtime.ts';
import { showcaseBot } from '../helpers/showcase-bot.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { webchatClientId } from '../helpers/webchat.ts';
import { launchChromium, listenOnAnotherOrigin, screenshots } from './browser.ts';
import type { Browser } from './browser.ts';

const PHONE = { width: 390, height: 844 };

/** A small picture, served by the shop (nothing comes from the internet). */
const PICTURE_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="180" viewBox="0 0 320 180"><rect width="320" height="180" fill="#e0ecff"/><path d="M40 140c40-10 90-12 150-8 40 3 70 0 90-8v26H40z" fill="#2f5bd3"/><circle cx="250" cy="50" r="24" fill="#f6b73c"/></svg>';

/** Pages of another origin than Parley's: a shop that embeds the webchat, and a React app. */
function shopSite(
  parley: string,
  pages: Record<string, string>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const route = (req.url ?? '/').split('?')[0] ?? '/';
    if (route === '/picture.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end(PICTURE_SVG);
      return;
    }
    const body = pages[route];
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': route.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8',
    });
    res.end(body.replaceAll('{parley}', parley));
  });
  return listenOnAnotherOrigin(server);
}

const shopPage = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>body{font-family:Georgia,serif;margin:0;background:#f7f3ec;color:#2b2118}header{background:#2b2118;color:#f7f3ec;padding:18px 32px;font-size:22px}main{padding:32px;max-width:720px}.product{display:flex;gap:24px;align-items:center;background:#fff;border-radius:12px;padding:20px;margin:18px 0;box-shadow:0 2px 8px rgba(0,0,0,.06)}.product img{width:160px;border-radius:8px}</style>
</head><body><header>Trailhead Outfitters</header><main>${body}</main></body></html>`;

const PRODUCTS = `<h1>Spring collection</h1>
<div class="product"><img src="/picture.svg" alt=""><div><h2>Trail shoes</h2><p>Light, waterproof, ready for the mountains. €129</p></div></div>
<div class="product"><img src="/picture.svg" alt=""><div><h2>Rain jacket</h2><p>Packs into its own pocket. €89</p></div></div>`;

/** The official React webchat from the npm package, unmodified, bundled for the shop's own page. */
async function bundleReactApp(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-react-webchat-'));
  try {
    const entry = path.join(dir, 'app.jsx');
    await writeFile(
      entry,
      `import { Webchat } from '@botpress/webchat';
import { createRoot } from 'react-dom/client';
const { apiUrl, clientId } = window.PARLEY;
createRoot(document.getElementById('app')).render(
  <Webchat clientId={clientId} apiUrl={apiUrl} configuration={{ botName: 'Shop assistant', color: '#b45309' }}
    style={{ width: '100%', height: '100%' }} />
);
`,
    );
    await esbuild.build({
      entryPoints: [entry],
      outdir: dir,
      bundle: true,
      format: 'esm',
      jsx: 'automatic',
      minify: true,
      logLevel: 'error',
      nodePaths: [path.resolve('node_modules')],
      loader: { '.mp3': 'dataurl' },
      define: { 'process.env.NODE_ENV': '"production"' },
    });
    const js = await readFile(path.join(dir, 'app.js'), 'utf8');
    const css = await readFile(path.join(dir, 'app.css'), 'utf8');
    return `${js}\n;document.head.insertAdjacentHTML('beforeend', ${JSON.stringify(`<style>${css}</style>`)});`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('webchat (sqlite, Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let site: { url: string; close(): Promise<void> };
  let save: (page: Page, name: string) => Promise<void>;
  let echo: { botId: string; clientId: string };
  let menu: { botId: string; clientId: string };
  let showcase: DeployedBot & { clientId: string };

  before(async () => {
    if (!existsSync(`${WEBCHAT_DIR}/manifest.json`)) {
      const build = spawnSync(process.execPath, ['scripts/build-webchat.mjs'], { encoding: 'utf8' });
      assert.equal(build.status, 0, build.stderr);
    }
    save = await screenshots('webchat');
    t = await startTestServer({ name: 'sqlite' });
    const e = await deployWithCli(t, 'examples/echo-bot');
    echo = { botId: e.botId, clientId: await webchatClientId(t, e.botId) };
    const m = await deployWithCli(t, 'examples/menu-bot');
    menu = { botId: m.botId, clientId: await webchatClientId(t, m.botId) };
    // The shop names its assistant and its colour in the bot's configuration.
    await t.client().updateBot({
      id: menu.botId,
      integrations: {
        chat: {
          configuration: {
            webchat: { botName: 'Trailhead helper', color: '#0f766e', feedbackEnabled: true },
          },
        },
      },
    });
    site = await shopSite(t.url, {
      '/': shopPage(
        'Trailhead Outfitters',
        `${PRODUCTS}<script src="{parley}/webchat/v1/inject.js" data-client-id="${echo.clientId}"></script>`,
      ),
      '/help': shopPage(
        'Help',
        `<h1>Help centre</h1><p>Ask our helper below.</p><script src="{parley}/webchat/v1/inject.js" data-client-id="${menu.clientId}"></script>`,
      ),
      '/inline': shopPage(
        'Contact',
        `<h1>Contact us</h1><div id="chat" style="height:560px;border:1px solid #d6cfc4;border-radius:12px;overflow:hidden"></div>
<script src="{parley}/webchat/v1/inject.js"></script>
<script>parley.init({ clientId: '${echo.clientId}', mode: 'inline', target: '#chat' });</script>`,
      ),
      '/react': `<!doctype html><html><head><meta charset="utf-8"><title>React app</title>
<style>html,body,#app{height:100%;margin:0}</style></head><body><div id="app"></div>
<script>window.PARLEY = { apiUrl: '{parley}/webchat', clientId: '${echo.clientId}' };</script>
<script type="module" src="/react-app.js"></script></body></html>`,
      '/react-app.js': await bundleReactApp(),
    });
    const s = await deployPackage(t, showcaseBot(`${site.url}/picture.svg`));
    showcase = { ...s, clientId: await webchatClientId(t, s.botId) };
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await t?.close();
  });

  /** A screenshot once the webchat's messages have faded in (its animations that end, in every frame). */
  async function shot(page: Page, name: string): Promise<void> {
    for (const frame of page.frames()) {
      await frame.evaluate(
        'Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished.catch(() => {})))',
      );
    }
    await save(page, name);
  }

  /** The conversations of a bot whose messages include `text` (read with the Runtime API as the bot). */
  async function runtimeConversationWith(botId: string, text: string): Promise<string[]> {
    const runtime = t.client({ botId });
    return waitFor(`a conversation of ${botId} with "${text}"`, async () => {
      const { conversations } = await runtime.listConversations({});
      for (const c of conversations) {
        const { messages } = await runtime.listMessages({ conversationId: c.id });
        const texts = messages.map((m) => String(m.payload.text ?? ''));
        if (texts.includes(text)) return texts.reverse();
      }
      return undefined;
    });
  }

  async function openBubble(page: Page, botName: RegExp): Promise<FrameLocator> {
    await page.getByRole('button', { name: botName }).click();
    const chat = page.frameLocator('iframe[title]');
    await chat.getByRole('textbox').waitFor();
    return chat;
  }

  async function say(chat: FrameLocator | Page, text: string): Promise<void> {
    const box = chat.getByRole('textbox');
    await box.fill(text);
    await box.press('Enter');
  }

  test('a shop on another origin embeds the script; a visitor writes and the echo bot answers', async () => {
    const page = await browser.page();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(site.url);
    const bubble = page.getByRole('button', { name: 'Chat with echo-bot' });
    await bubble.waitFor();
    assert.equal(await bubble.getAttribute('aria-expanded'), 'false');
    await shot(page, '01-shop-bubble');
    const chat = await openBubble(page, /Chat with echo-bot/);
    await chat.getByText('echo-bot').first().waitFor();
    await say(chat, 'Do you have the trail shoes in size 42?');
    await chat.getByText('You said: Do you have the trail shoes in size 42?').waitFor();
    await shot(page, '02-shop-chat-reply');
    assert.deepEqual(errors, []);

    // The conversation is the bot's, on the Runtime API.
    const texts = await runtimeConversationWith(echo.botId, 'Do you have the trail shoes in size 42?');
    assert.deepEqual(texts, [
      'Do you have the trail shoes in size 42?',
      'You said: Do you have the trail shoes in size 42?',
    ]);

    // The header's close button closes it; the bubble opens it again, conversation and all.
    await chat.getByRole('button', { name: /close/i }).first().click();
    await page.locator('iframe[title]').waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Chat with echo-bot' }).click();
    await chat.getByText('You said: Do you have the trail shoes in size 42?').waitFor();

    await page.setViewportSize(PHONE);
    await shot(page, '03-shop-chat-phone');
    await page.close();
  });

  test('the menu bot’s choice is clicked and the conversation moves on; thumbs down is recorded', async () => {
    const page = await browser.page();
    await page.goto(`${site.url}/help`);
    const bubble = page.getByRole('button', { name: 'Chat with Trailhead helper' });
    await bubble.waitFor();
    const colour = await page.evaluate(
      "getComputedStyle(document.querySelector('[data-parley-webchat]').shadowRoot.querySelector('.bubble')).backgroundColor",
    );
    assert.equal(colour, 'rgb(15, 118, 110)', 'the bubble has the bot’s colour');
    const chat = await openBubble(page, /Chat with Trailhead helper/);
    await say(chat, 'hi');
    await chat.getByText('What would you like to do?').waitFor();
    await shot(page, '04-menu-choice');
    await chat.getByRole('button', { name: 'FAQ', exact: true }).click();
    await chat.getByText('Ask me about our hours, prices or how to contact us.').waitFor();
    await say(chat, 'what are your hours?');
    await chat.getByText('We are open from 9:00 to 17:00, Monday to Friday.').waitFor();
    await shot(page, '05-menu-moved-on');

    // Thumbs down on the bot's answer, with a comment (the bot's configuration turns thumbs on). The
    // icons have no name of their own: they are found by the webchat's class names.
    const answer = 'We are open from 9:00 to 17:00, Monday to Friday.';
    const rated = chat.locator('.bpMessageBlocksBubble', { hasText: answer });
    await rated.locator('.bpMessageBlocksBubbleFeedbackIcon').nth(1).click();
    await chat.getByPlaceholder('Let us know what went wrong...').fill('I need weekend hours');
    await chat.getByRole('button', { name: 'Send feedback' }).click();
    const runtime = t.client({ botId: menu.botId });
    const tags = await waitFor('the feedback on the answer', async () => {
      const { conversations } = await runtime.listConversations({});
      for (const c of conversations) {
        const { messages } = await runtime.listMessages({ conversationId: c.id });
        const found = messages.find((m) => m.payload.text === answer && m.tags['webchat:feedback']);
        if (found) return found.tags;
      }
      return undefined;
    });
    assert.equal(tags['webchat:feedback'], 'negative');
    assert.equal(tags['webchat:feedbackComment'], 'I need weekend hours');
    await shot(page, '06-menu-feedback');
    await page.close();
  });

  test('the share link is a full-page chat; a reload keeps the conversation', async () => {
    const page = await browser.page();
    const { bot } = await t.client().getBot({ id: echo.botId });
    const shareUrl = (bot.integrations.chat as unknown as { webchatShareUrl: string }).webchatShareUrl;
    assert.equal(shareUrl, `${t.url}/s/${echo.clientId}`);
    await page.goto(shareUrl);
    assert.equal(await page.title(), 'echo-bot');
    await say(page, 'Is the rain jacket in stock?');
    await page.getByText('You said: Is the rain jacket in stock?').waitFor();
    await page.reload();
    await page.getByText('You said: Is the rain jacket in stock?').waitFor();
    await say(page, 'And in blue?');
    await page.getByText('You said: And in blue?').waitFor();
    await shot(page, '07-share-link');
    const texts = await runtimeConversationWith(echo.botId, 'And in blue?');
    assert.deepEqual(texts, [
      'Is the rain jacket in stock?',
      'You said: Is the rain jacket in stock?',
      'And in blue?',
      'You said: And in blue?',
    ]);
    await page.close();
  });

  test('what a bot sends is rendered: image, card, carousel, dropdown, file; a card’s button answers', async () => {
    const page = await browser.page({ width: 480, height: 1400 });
    await page.goto(`${t.url}/s/${showcase.clientId}`);
    await say(page, 'show');
    await page.getByText('Trail shoes').waitFor();
    await page.getByRole('heading', { name: 'Boots' }).waitFor();
    await page.getByText('Which size?').waitFor();
    await page.getByText('Size guide').waitFor();
    assert.ok((await page.locator('img[src$="picture.svg"]').count()) >= 2, 'the pictures are shown');
    await shot(page, '08-rich-messages');
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.getByText('You picked: Add to cart').waitFor();
    await page.close();
  });

  test('inline on a page, with init(); and the official React webchat from npm on another origin', async () => {
    const page = await browser.page();
    await page.goto(`${site.url}/inline`);
    const chat = page.frameLocator('#chat iframe');
    await say(chat, 'Inline hello');
    await chat.getByText('You said: Inline hello').waitFor();
    await shot(page, '09-inline');

    const react = await browser.page();
    const failed: string[] = [];
    react.on('requestfailed', (r) => failed.push(`${r.method()} ${r.url()} ${r.failure()?.errorText}`));
    react.on('console', (m) => {
      if (m.type() === 'error') failed.push(m.text());
    });
    await react.goto(`${site.url}/react`);
    await say(react, 'Hello from a React app');
    await react.getByText('You said: Hello from a React app').waitFor();
    await shot(react, '10-react-webchat-cors');
    assert.deepEqual(
      failed.filter((f) => /CORS|Access-Control/i.test(f)),
      [],
      'no request was blocked by CORS',
    );
    await page.close();
    await react.close();
  });

  test('no page broke its Content Security Policy', () => {
    assert.deepEqual(browser.cspViolations, []);
  });
});
