// The console's Versions section (issue 38), in Debian's Chromium: a bot deployed twice with `parley deploy
// --note`, each deploy a version listed newest first with its note, author and kind, the second marked
// deployed; the first deployed again from the console after a confirmation, the mark moving and the bot
// answering a conversation begun before with the first version's reply; a role lost meanwhile refused in
// the console's usual way; a viewer reading the list with no deploy button. Screens are saved under
// test/e2e/artifacts/console-versions/.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import {
  deployFolder,
  oneNodePackage,
  replies,
  sendAndWait,
  startChat,
  writePackage,
} from '../helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from '../helpers/deployed-bots.ts';
import { memberToken } from '../helpers/handoffs.ts';
import { parleyAdmin } from '../helpers/parley-client.ts';
import { waitFor } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { ensureConsoleBuilt, launchChromium, screenshots, signInToConsole } from './browser.ts';
import type { Browser } from './browser.ts';

const PHONE = { width: 390, height: 844 };

/** A bot that answers every message with `reply`. */
const replyingBot = (reply: string) =>
  oneNodePackage('versions-bot', [{ type: 'say', message: { type: 'text', text: reply } }]);

const FIRST = { reply: 'Hello from the first version', note: 'greets in English' };
const SECOND = { reply: 'Bonjour from the second version', note: 'greets in French' };

describe('console: a bot’s versions (sqlite, Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let bot: DeployedBot;
  let chat: Chatter;
  let dir: string;
  let shot: (page: Page, name: string) => Promise<void>;

  before(async () => {
    ensureConsoleBuilt();
    shot = await screenshots('console-versions');
    t = await startTestServer({ name: 'sqlite' });
    dir = await mkdtemp(path.join(os.tmpdir(), 'parley-versions-bot-'));
    await writePackage(dir, replyingBot(FIRST.reply));
    bot = await deployFolder(t, dir, ['--note', FIRST.note]);
    await writePackage(dir, replyingBot(SECOND.reply));
    await deployFolder(t, dir, ['--bot-id', bot.botId, '--note', SECOND.note]);
    chat = await startChat(bot);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The bot's reply to `text` in the conversation begun before the rollback. */
  async function answerTo(text: string): Promise<string[]> {
    const before = (await replies(bot, chat)).length;
    const event = await sendAndWait(bot, chat, text);
    assert.equal(event.status, 'processed', `the turn of "${text}" ended ${event.status}`);
    return (await replies(bot, chat)).slice(before);
  }

  /** Signs in with `token` in a new tab and opens the bot's Versions section by its tab. */
  async function openVersions(token: string, size?: { width: number; height: number }): Promise<Page> {
    const page = await signInToConsole(browser, t.url, token, size);
    await page.getByRole('link', { name: 'versions-bot' }).click();
    await page.getByRole('navigation', { name: 'Bot' }).getByRole('link', { name: 'Versions' }).click();
    await page.waitForURL(/\/versions$/);
    await rowOf(page, FIRST.note).waitFor();
    return page;
  }

  const rowOf = (page: Page, note: string): Locator => page.getByRole('row').filter({ hasText: note });
  const markOf = (row: Locator): Locator => row.getByText('deployed', { exact: true });
  const deployedVersion = async () =>
    (await parleyAdmin(t).listBotVersions({ id: bot.botId })).versions.find((v) => v.deployed)?.name;

  test('both deploys are listed newest first, with their notes, author and kind; the second is deployed', async () => {
    assert.deepEqual(await answerTo('hi'), [SECOND.reply]);
    const page = await openVersions(t.token);
    const rows = page.getByRole('row');
    // The header, then the second deploy, then the first.
    assert.equal(await rows.count(), 3);
    assert.match((await rows.nth(1).textContent()) ?? '', new RegExp(`^v2.*${SECOND.note}`));
    assert.match((await rows.nth(2).textContent()) ?? '', new RegExp(`^v1.*${FIRST.note}`));

    const { account } = await t.client().getAccount({});
    const { versions } = await parleyAdmin(t).listBotVersions({ id: bot.botId });
    for (const [row, version] of [
      [rowOf(page, SECOND.note), versions[0]],
      [rowOf(page, FIRST.note), versions[1]],
    ] as const) {
      assert.ok(version);
      await row.getByText(account.email).waitFor();
      await row.getByText('Package (parley deploy)').waitFor();
      // The id's end, the whole id on hover.
      assert.equal(await row.locator('code').getAttribute('title'), version.id);
      assert.equal(await row.locator('code').textContent(), `…${version.id.slice(-8)}`);
    }
    assert.equal(await markOf(rowOf(page, SECOND.note)).count(), 1, 'the second is marked deployed');
    assert.equal(await markOf(rowOf(page, FIRST.note)).count(), 0);
    assert.equal(await rowOf(page, SECOND.note).getByRole('button').count(), 0, 'no deploy of what runs');
    await rowOf(page, FIRST.note).getByRole('button', { name: 'Deploy v1' }).waitFor();
    await shot(page, '01-versions');
    await page.close();
  });

  test('the first is deployed again after a confirmation: the mark moves and the bot answers as the first', async () => {
    const page = await openVersions(t.token);
    const lastDeploy = page.locator('.page-header time');
    const before = await lastDeploy.getAttribute('datetime');
    await rowOf(page, FIRST.note).getByRole('button', { name: 'Deploy v1' }).click();
    const confirm = page.getByRole('group', { name: 'Deploy v1 (version 1)?' });
    await confirm.getByText('Conversations going on are kept').waitFor();
    await confirm.getByText('the dialog starts over as a new one would').waitFor();
    await shot(page, '02-confirm');

    // Cancelled, nothing changes.
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.equal(await deployedVersion(), 'v2');

    await rowOf(page, FIRST.note).getByRole('button', { name: 'Deploy v1' }).click();
    await confirm.getByRole('button', { name: 'Yes, deploy v1' }).click();
    await page.getByRole('status').getByText('v1 (version 1) is deployed').waitFor();
    await markOf(rowOf(page, FIRST.note)).waitFor();
    assert.equal(await markOf(rowOf(page, SECOND.note)).count(), 0, 'the mark moved');
    await rowOf(page, SECOND.note).getByRole('button', { name: 'Deploy v2' }).waitFor();
    assert.equal(await confirm.count(), 0);
    // The frame's line of the last deploy says it too.
    await waitFor(
      'the frame’s deploy time',
      async () => (await lastDeploy.getAttribute('datetime')) !== before,
    );
    await shot(page, '03-rolled-back');
    assert.equal(await deployedVersion(), 'v1');
    assert.equal((await parleyAdmin(t).listBotVersions({ id: bot.botId })).versions.length, 2, 'none made');

    // The conversation begun under the second version goes on, answered by the first.
    assert.deepEqual(await answerTo('hi again'), [FIRST.reply]);
    await page.close();
  });

  test('a deploy the role no longer allows shows the 403 explanation, and the buttons go', async () => {
    const developer = await memberToken(t, 'developer');
    const page = await openVersions(developer.token, PHONE);
    await rowOf(page, SECOND.note).getByRole('button', { name: 'Deploy v2' }).click();
    // Meanwhile a manager makes them a viewer.
    await t.client().updateWorkspaceMember({ id: developer.memberId, role: 'viewer' });
    await page.getByRole('button', { name: 'Yes, deploy v2' }).click();
    await page
      .getByRole('alert')
      .getByText(/may not do this/)
      .waitFor();
    await page.getByText('Read only: your role (viewer) may not deploy versions.').waitFor();
    assert.equal(
      await page.getByRole('button', { name: /deploy/i }).count(),
      0,
      'neither the list’s nor the question’s',
    );
    await shot(page, '04-forbidden-phone');
    assert.equal(await deployedVersion(), 'v1');
    await page.close();
  });

  test('a viewer reads the versions with no deploy button', async () => {
    const viewer = await memberToken(t, 'viewer');
    const page = await openVersions(viewer.token);
    await markOf(rowOf(page, FIRST.note)).waitFor();
    await rowOf(page, SECOND.note).getByText(SECOND.note).waitFor();
    await page.getByText('Read only: your role (viewer) may not deploy versions.').waitFor();
    assert.equal(await page.getByRole('button', { name: /deploy/i }).count(), 0, 'no deploy button');
    await shot(page, '05-viewer');
    await page.close();
  });
});
