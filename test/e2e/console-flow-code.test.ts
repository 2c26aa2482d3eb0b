// The console's Flow tab, code and export (issue 38), in Debian's Chromium: a code card's code is typed in
// the code editor, which completes `event.` with the engine's members, `client.` with the bot operations,
// `env.` and the variables with the draft's bot.json; Escape then Tab leaves it. The draft, deployed from
// the console, is downloaded as a zip; the zip unzipped is a folder that the real `parley validate` accepts
// and `parley deploy` deploys as a second bot, which answers as the first does: one format, two ways in.
// Screens are saved under test/e2e/artifacts/console/flow-code/ to be looked at.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { unzipSync } from 'fflate';
import type { Page } from 'playwright-core';
import { ChatSession, deployWithCli, textOf } from '../helpers/chat-bots.ts';
import { memberToken } from '../helpers/handoffs.ts';
import { parleyAdmin } from '../helpers/parley-client.ts';
import { runParley } from '../helpers/process.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { ensureConsoleBuilt, launchChromium, screenshots, signInToConsole } from './browser.ts';
import type { Browser } from './browser.ts';

describe('console: code cards and the draft as a zip (sqlite, Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let botId: string;
  let webhookUrl: string;
  let shot: (page: Page, name: string) => Promise<void>;
  let work: string;

  before(async () => {
    ensureConsoleBuilt();
    shot = await screenshots('console/flow-code');
    work = await mkdtemp(path.join(os.tmpdir(), 'parley-flow-zip-'));
    t = await startTestServer({ name: 'sqlite' });
    ({ botId, webhookUrl } = await deployWithCli(t, 'examples/menu-bot'));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function openFlow(token: string): Promise<Page> {
    const page = await signInToConsole(browser, `${t.url}/console/`, token, { width: 1400, height: 1000 });
    await page.goto(`${t.url}/console/bots/${botId}/flow`);
    await page.locator('.react-flow__node').first().waitFor();
    return page;
  }

  /** The bot's first `count` replies to `text` in a new conversation, through the Chat API. */
  async function replies(url: string, text: string, count: number): Promise<string[]> {
    const chat = await ChatSession.open(url);
    try {
      await chat.say(text);
      return (await chat.nextReplies(count)).map(textOf);
    } finally {
      await chat.close();
    }
  }

  /** The file the page downloads from "Download as zip", and the zip's entries. */
  async function downloadZip(page: Page): Promise<{ name: string; entries: Record<string, Uint8Array> }> {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download as zip' }).click(),
    ]);
    const file = await download.path();
    return { name: download.suggestedFilename(), entries: unzipSync(await readFile(file)) };
  }

  test('a code card typed with completions, deployed, exported as a zip that the CLI deploys the same', async () => {
    const page = await openFlow(t.token);
    const state = page.getByRole('toolbar', { name: 'Draft' }).getByRole('status');
    await state.getByText('no problems').waitFor();

    // A node with a code card: its code in the code editor.
    await page.getByLabel('New node').fill('shout');
    await page.getByRole('button', { name: 'Add node' }).click();
    const panel = page.getByRole('complementary', { name: 'Node shout' });
    await panel.getByLabel('New card').selectOption('code');
    await panel.getByRole('button', { name: 'Add card' }).click();
    const codeCard = panel.locator('.flow-cards > li').first();
    // (The code editor, not the text area that stands in while its chunk loads.)
    const editor = codeCard.locator('.cm-content[role="textbox"][aria-label="code"]');
    await editor.click();
    const options = page.locator('.cm-tooltip-autocomplete li');
    const completions = async (typed: string): Promise<string[]> => {
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.press('Backspace');
      await page.keyboard.type(typed);
      await options.first().waitFor();
      const labels = (await options.locator('.cm-completionLabel').allTextContents()).sort();
      await page.keyboard.press('Escape');
      return labels;
    };
    // Each object's names: the engine's event, the contract's bot operations, the draft's bot.json.
    const event = await completions('event.');
    for (const name of ['payload', 'preview', 'conversationId', 'state', 'kb'])
      assert.ok(event.includes(name), name);
    const client = await completions('client.');
    for (const name of ['createMessage', 'getOrSetState', 'findTableRows'])
      assert.ok(client.includes(name), name);
    assert.deepEqual(await completions('env.'), ['COMPANY']);
    assert.deepEqual(await completions('conversation.'), ['visits']);

    // The code typed, a member chosen from the list.
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('workflow.choice = event.');
    await options.getByText('preview', { exact: true }).waitFor();
    await page.keyboard.type('pre');
    await page.locator('.cm-tooltip-autocomplete li[aria-selected="true"]').getByText('preview').waitFor();
    await shot(page, '01-completion');
    await page.keyboard.press('Enter');
    await page.keyboard.type('.toUpperCase(');
    await page.keyboard.press('End');
    await page.keyboard.type(';');
    assert.equal(await page.locator('.code-editor:focus-within').count(), 1);
    // Escape, then Tab: the focus leaves the editor (it does not trap Tab).
    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab');
    assert.equal(await page.locator('.code-editor:focus-within').count(), 0);
    await state.getByText('Unsaved changes').waitFor();
    await state.getByText('no problems').waitFor();
    assert.equal(
      await codeCard.locator('.flow-card-summary').textContent(),
      'workflow.choice = event.preview.toUpperCase();',
    );

    // A say card after it, and a transition from start.
    await panel.getByLabel('New card').selectOption('say');
    await panel.getByRole('button', { name: 'Add card' }).click();
    await panel
      .locator('.flow-cards > li')
      .nth(1)
      .getByLabel('message')
      .fill('{ "type": "text", "text": "You said {{ workflow.choice }}" }');
    await page.locator('.react-flow__node[data-id="start"]').click();
    const start = page.getByRole('complementary', { name: 'Node start' });
    await start.getByLabel('To node').fill('shout');
    await start.getByLabel('When (a condition; empty: otherwise)').fill("event.payload.text === 'shout it'");
    await start.getByRole('button', { name: 'Add transition' }).click();
    await state.getByText('no problems').waitFor();
    await page.locator('.react-flow__node[data-id="shout"]').click();
    await shot(page, '02-code-card');

    // Deployed from the console: the code runs.
    await page.getByRole('button', { name: 'Deploy…' }).click();
    await page.getByLabel('Note (what changed, and why)').fill('shouts back');
    await page.getByRole('button', { name: 'Yes, deploy' }).click();
    await page.getByText('Deployed as a new version').waitFor();
    const shout = await replies(webhookUrl, 'shout it', 1);
    assert.deepEqual(shout, ['You said SHOUT IT']);
    const hello = await replies(webhookUrl, 'hello', 2);

    // The zip: one folder named after the bot, the package's files in it.
    const { name, entries } = await downloadZip(page);
    assert.equal(name, 'menu-bot.zip');
    const paths = Object.keys(entries).sort();
    assert.ok(
      paths.every((p) => p.startsWith('menu-bot/')),
      paths.join(', '),
    );
    const { draft } = await parleyAdmin(t).getBotDraft({ id: botId });
    assert.deepEqual(
      paths,
      Object.keys(draft.files)
        .map((f) => `menu-bot/${f}`)
        .sort(),
    );
    for (const p of [
      'bot.json',
      'workflows/main.json',
      'code/count-visit.ts',
      'hooks/after_turn_end/01-log.ts',
    ])
      assert.ok(paths.includes(`menu-bot/${p}`), p);
    for (const [p, bytes] of Object.entries(entries)) {
      assert.equal(new TextDecoder().decode(bytes), draft.files[p.slice('menu-bot/'.length)], p);
      await mkdir(path.dirname(path.join(work, p)), { recursive: true });
      await writeFile(path.join(work, p), bytes);
    }

    // The real CLI: validated, deployed as a second bot, which answers as the first.
    const folder = path.join(work, 'menu-bot');
    const validate = runParley(['validate', folder]);
    assert.equal(await validate.exited, 0, validate.output());
    const second = await deployWithCli(t, folder);
    assert.notEqual(second.botId, botId);
    assert.deepEqual(await replies(second.webhookUrl, 'shout it', 1), shout);
    assert.deepEqual(await replies(second.webhookUrl, 'hello', 2), hello);
    await page.close();
  });

  test('a viewer downloads the draft as a zip too', async () => {
    const page = await openFlow((await memberToken(t, 'viewer')).token);
    const { name, entries } = await downloadZip(page);
    assert.equal(name, 'menu-bot.zip');
    const main = entries['menu-bot/workflows/main.json'];
    assert.ok(main);
    assert.match(new TextDecoder().decode(main), /"id": "shout"/);
    await page.close();
  });

  test('no page broke its Content Security Policy', () => {
    assert.deepEqual(browser.cspViolations, []);
  });
});
