// The console's Publish screen as an operator uses it (issue 36), in Debian's Chromium: the share link and
// the embed snippet copied, the look edited with the official webchat's live preview following it, an
// origin list that leaves out the console's own origin warned about (and, saved anyway, the frame saying
// why it shows no chat), the fallback message switched, and the share page showing what was saved.
// Screens are saved under test/e2e/artifacts/console-publish/ (and /tmp/publish-shots/ when it exists).
import assert from 'node:assert/strict';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Frame, FrameLocator, Page } from 'playwright-core';
import { deployPackage } from '../helpers/deployed-bots.ts';
import type { DeployedBot } from '../helpers/deployed-bots.ts';
import { TURNS_BOT } from '../helpers/turns-bot.ts';
import { parleyAdmin } from '../helpers/parley-client.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { ensureConsoleBuilt, launchChromium, screenshots } from './browser.ts';
import type { Browser } from './browser.ts';

/** Where the brief asked the screens to be looked at, besides the suite's artifacts. */
const EXTRA_SHOTS = process.env.PUBLISH_SHOTS_DIR;

describe('console: publish a bot (sqlite, Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let bot: DeployedBot;
  let page: Page;
  let saveShot: (page: Page, name: string) => Promise<void>;
  const shot = async (name: string, on: Page = page) => {
    await saveShot(on, name);
    if (EXTRA_SHOTS) {
      await mkdir(EXTRA_SHOTS, { recursive: true });
      await copyFile(
        path.resolve('test/e2e/artifacts/console-publish', `${name}.png`),
        path.join(EXTRA_SHOTS, `${name}.png`),
      );
    }
  };

  before(async () => {
    ensureConsoleBuilt();
    saveShot = await screenshots('console-publish');
    t = await startTestServer({ name: 'sqlite' });
    bot = await deployPackage(t, TURNS_BOT);
    browser = await launchChromium();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    page = await browser.page({ width: 1280, height: 900 });
    await page.goto(t.url);
    await page.waitForURL(/\/console\/sign-in/);
    await page.getByLabel('Personal access token').fill(t.token);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/bots$/);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const chatOf = async () => {
    const { bot: read } = await parleyAdmin(t).getBot({ id: bot.botId });
    const chat = read.integrations.chat;
    assert.ok(chat?.webchatClientId && chat.webchatShareUrl);
    return { ...chat, webchatClientId: chat.webchatClientId, webchatShareUrl: chat.webchatShareUrl };
  };
  const clipboard = () => page.evaluate<string>('navigator.clipboard.readText()');
  const preview = (): FrameLocator => page.frameLocator('iframe[title="Preview of the webchat"]');
  /** The preview's frame (the share page with `?preview`), once loaded. */
  const previewFrame = async (): Promise<Frame> => {
    await preview().locator('.bpHeaderContainer').first().waitFor();
    const frame = page.frames().find((f) => /\/s\/[^?]+\?preview$/.test(f.url()));
    assert.ok(frame, 'the preview frame');
    return frame;
  };
  /** The official webchat's primary colour in a page or frame, as its styles resolve it. */
  const primaryOf = (where: Frame | Page) =>
    where.evaluate<string>(
      "getComputedStyle(document.querySelector('.bpHeaderContainer')).getPropertyValue('--bpPrimary-500').trim()",
    );

  test('the Publish tab shows the share link and the snippet, each copied as shown', async () => {
    const chat = await chatOf();
    await page.getByRole('link', { name: 'turns-bot' }).click();
    await page.getByRole('navigation', { name: 'Bot' }).getByRole('link', { name: 'Publish' }).click();
    await page.waitForURL(/\/publish$/);
    await page.getByRole('heading', { name: 'Share link' }).waitFor();

    const link = page.getByLabel('share link', { exact: true });
    assert.equal(await link.textContent(), chat.webchatShareUrl);
    assert.equal(chat.webchatShareUrl, `${t.url}/s/${chat.webchatClientId}`);
    await page.getByRole('button', { name: 'Copy share link' }).click();
    assert.equal(await clipboard(), chat.webchatShareUrl);

    // What the README's snippet prints for this bot, to the character.
    const snippet = `<script src="${t.url}/webchat/v1/inject.js" data-client-id="${chat.webchatClientId}"></script>`;
    assert.equal(await page.getByLabel('embed snippet', { exact: true }).textContent(), snippet);
    await page.getByRole('button', { name: 'Copy embed snippet' }).click();
    assert.equal(await clipboard(), snippet);

    const [tab] = await Promise.all([
      page.waitForEvent('popup'),
      page.getByRole('link', { name: 'Open in a new tab' }).click(),
    ]);
    await tab.waitForURL(chat.webchatShareUrl);
    await tab.getByRole('textbox').waitFor();
    await tab.close();

    await preview().getByText('turns-bot').first().waitFor();
    await shot('01-publish');
  });

  test('the preview follows the look as it is typed, before it is saved', async () => {
    const before = await primaryOf(await previewFrame());
    await page.getByRole('textbox', { name: /^Name/ }).fill('Trail guide');
    await page.getByLabel('Colour', { exact: true }).fill('#0f766e');
    await page.getByLabel('Greeting').fill('Ask me which trail suits you today.');
    await preview().getByText('Trail guide').first().waitFor();
    await preview().getByText('Ask me which trail suits you today.').first().waitFor();
    const after = await primaryOf(await previewFrame());
    assert.notEqual(after, before, `the preview's colour changed (${before} → ${after})`);
    // Nothing is saved yet.
    assert.equal((await chatOf()).configuration.webchat, undefined);
    await shot('02-preview-unsaved');
    await page.getByRole('button', { name: 'Save appearance' }).click();
    await page.getByText('Saved: the share page and the embed show it now.').waitFor();
    assert.deepEqual((await chatOf()).configuration.webchat, {
      botName: 'Trail guide',
      color: '#0f766e',
      botDescription: 'Ask me which trail suits you today.',
    });
  });

  test('an origin list without the console’s own origin is warned about; saved anyway, the frame says why', async () => {
    const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Allowed origins' }) });
    await panel.getByLabel('Only these origins').check();
    await panel.getByRole('button', { name: 'Add origin' }).click();
    await panel.getByLabel('Origin 1').fill('https://shop.example.com');
    await panel.getByRole('button', { name: 'Save origins' }).click();
    const warning = panel.getByRole('alert');
    await warning.getByText(`This list leaves out ${t.url}`).waitFor();
    assert.equal((await chatOf()).configuration.allowedOrigins, undefined, 'nothing saved before an answer');
    await shot('03-origins-warning');

    await warning.getByRole('button', { name: 'Save without it' }).click();
    await panel.getByText('Saved.').waitFor();
    assert.deepEqual((await chatOf()).configuration.allowedOrigins, ['https://shop.example.com']);
    // The console's preview is now a page of an origin the bot does not allow: the frame tells why.
    await page.reload();
    await preview().getByText(`This chat cannot be shown on ${t.url}.`).waitFor();
    await page.getByText('https://shop.example.com is on another site than this server').waitFor();
    await shot('04-origin-refused-preview');

    await panel.getByRole('button', { name: 'Save origins' }).click();
    await panel.getByRole('button', { name: `Add ${t.url} and save` }).click();
    await panel.getByText('Saved.').waitFor();
    assert.deepEqual((await chatOf()).configuration.allowedOrigins, ['https://shop.example.com', t.url]);
    await page.reload();
    await preview().getByText('Trail guide').first().waitFor();
  });

  test('the fallback message is switched off and on again, with a text of its own', async () => {
    const panel = page.locator('section', { has: page.getByRole('heading', { name: 'When a turn fails' }) });
    const enabled = panel.getByLabel('Send a message to the visitor when a turn fails');
    assert.equal(await enabled.isChecked(), true, 'on by default');
    await enabled.uncheck();
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    await panel.getByText('Saved.').waitFor();
    assert.deepEqual((await chatOf()).configuration.fallbackMessage, { enabled: false });
    await enabled.check();
    await panel
      .getByRole('textbox', { name: 'Message' })
      .fill('Our guide tripped on a root. Please ask again.');
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    await panel.getByText('Saved.').waitFor();
    assert.deepEqual((await chatOf()).configuration.fallbackMessage, {
      enabled: true,
      text: 'Our guide tripped on a root. Please ask again.',
    });
    await shot('05-publish-saved');
  });

  test('the share page shows the saved name, greeting and colour', async () => {
    const chat = await chatOf();
    const share = await browser.page({ width: 480, height: 760 });
    await share.goto(chat.webchatShareUrl);
    await share.getByText('Trail guide').first().waitFor();
    await share.getByText('Ask me which trail suits you today.').first().waitFor();
    assert.equal(await share.title(), 'Trail guide');
    assert.equal(
      await primaryOf(share),
      await primaryOf(await previewFrame()),
      'the colour the preview showed',
    );
    await shot('06-share-page', share);
    await share.close();
    assert.deepEqual(browser.cspViolations, [], 'no page broke its Content Security Policy');
  });
});
