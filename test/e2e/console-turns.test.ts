// The console's transcript, conversations, bots list and "Try it", as an operator uses them (issues 36
// and 32): a bot whose turns overlap (one message sent before the last turn ended), one that fails, an
// AI card's model call, in Debian's Chromium. Screens are saved under test/e2e/artifacts/console-turns/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { DEFAULT_FALLBACK_TEXT } from '../../src/domain/chat/fallback-message.ts';
import { deployPackage, send, startChat, waitForTurn } from '../helpers/deployed-bots.ts';
import { TURNS_BOT } from '../helpers/turns-bot.ts';
import type { Chatter, DeployedBot } from '../helpers/deployed-bots.ts';
import { parleySettings, startModelServer } from '../helpers/model-server.ts';
import type { ModelServer } from '../helpers/model-server.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { ensureConsoleBuilt, launchChromium, screenshots } from './browser.ts';
import type { Browser } from './browser.ts';

describe('console: turns, conversations, try it (sqlite, Chromium)', () => {
  let t: TestServer;
  let models: ModelServer;
  let browser: Browser;
  let bot: DeployedBot;
  /** Ada's conversation: "hi", "boom", "ok", sent one after the other without waiting. */
  let ada: Chatter;
  /** A visitor without a name, who asks the model. */
  let visitor: Chatter;
  let shot: (page: Page, name: string) => Promise<void>;

  before(async () => {
    ensureConsoleBuilt();
    shot = await screenshots('console-turns');
    models = await startModelServer();
    t = await startTestServer({ name: 'sqlite' }, { llmPrivateTargets: 'on', ...parleySettings(models) });
    bot = await deployPackage(t, TURNS_BOT);
    ada = await startChat(bot);
    await bot.client.updateUser({ id: ada.runtimeUserId, name: 'Ada Lovelace' });
    // As `printf 'hi\nboom\nok\n' | parley chat` sends them: "boom" and "ok" arrive while "hi" is answered.
    const sent = [];
    for (const text of ['hi', 'boom', 'ok']) sent.push(await send(ada, text));
    for (const messageId of sent) await waitForTurn(bot, ada, { messageId });
    visitor = await startChat(bot);
    await waitForTurn(bot, visitor, { messageId: await send(visitor, 'write a haiku') });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await models?.close();
  });

  async function signIn(): Promise<Page> {
    const page = await browser.page();
    await page.goto(t.url);
    await page.waitForURL(/\/console\/sign-in/);
    await page.getByLabel('Personal access token').fill(t.token);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/bots$/);
    return page;
  }

  /** The turn of the user's message `text` in the transcript. */
  const turnOf = (page: Page, text: string): Locator =>
    page
      .locator('li.turn')
      .filter({ has: page.locator('.bubble.from-user p.text').getByText(text, { exact: true }) });

  const texts = async (turn: Locator, selector: string) =>
    (await turn.locator(selector).allTextContents()).map((s) => s.trim());

  test('the premise: the replies of "hi" and "boom" come after "ok" was sent (time cannot group them)', async () => {
    const { messages } = await bot.client.listMessages({ conversationId: ada.runtimeConversationId });
    const okSent = messages.find((m) => m.payload.text === 'ok' && m.direction === 'incoming');
    const hiReply = messages.find((m) => m.payload.text === 'You said: hi');
    assert.ok(okSent && hiReply);
    assert.ok(hiReply.createdAt > okSent.createdAt, 'the reply to "hi" was sent after "ok" arrived');
  });

  test('each turn of the transcript shows its own replies and log lines only', async () => {
    const page = await signIn();
    await page.goto(`${t.url}/console/bots/${bot.botId}/conversations/${ada.runtimeConversationId}`);
    const hi = turnOf(page, 'hi');
    const boom = turnOf(page, 'boom');
    const ok = turnOf(page, 'ok');
    await ok.locator('.bubble.from-bot').getByText('You said: ok').waitFor();

    assert.deepEqual(await texts(hi, '.bubble.from-bot p.text'), ['You said: hi']);
    assert.deepEqual(await texts(hi, '.log-lines .message'), ['turn for: hi']);

    assert.deepEqual(
      await texts(boom, '.bubble.from-bot p.text'),
      [DEFAULT_FALLBACK_TEXT],
      'the failed turn sent only the fallback message',
    );
    await boom.getByText(/Turn failed:.*boom was said/).waitFor();
    const boomLines = await texts(boom, '.log-lines .message');
    assert.equal(boomLines[0], 'turn for: boom');
    assert.ok(boomLines.length >= 2, 'the failure is logged in its turn');
    assert.ok(
      boomLines.slice(1).every((l) => /boom was said/.test(l)),
      `only the failure's lines follow: ${JSON.stringify(boomLines)}`,
    );
    assert.equal(await boom.getAttribute('class'), 'turn failed');

    assert.deepEqual(await texts(ok, '.bubble.from-bot p.text'), ['You said: ok']);
    assert.deepEqual(await texts(ok, '.log-lines .message'), ['turn for: ok']);
    await shot(page, '01-transcript-overlapping-turns');
    await page.close();
  });

  test('an AI card’s model call is a folded row of its turn, which opens to the line', async () => {
    const page = await signIn();
    await page.goto(`${t.url}/console/bots/${bot.botId}/conversations/${visitor.runtimeConversationId}`);
    const turn = turnOf(page, 'write a haiku');
    await turn.locator('.bubble.from-bot').getByText('echo: write a haiku').waitFor();
    const calls = turn.locator('details.turn-calls');
    const summary = (await calls.locator('summary').textContent())?.trim() ?? '';
    assert.match(summary, /^1 model call, \d+ ms$/);
    const line = calls.getByText(/^aiGenerate card in node "write": model call to default:test-fast/);
    assert.equal(await line.isVisible(), false, 'folded by default');
    // The model's line is in the row, not among the turn's other lines.
    assert.deepEqual(await texts(turn, '.turn-logs .message'), ['turn for: write a haiku']);
    await calls.locator('summary').click();
    await line.waitFor({ state: 'visible' });
    await shot(page, '02-transcript-model-call-open');
    await page.close();
  });

  test('conversation rows show the user’s name (or a readable stand-in) and the last message', async () => {
    const page = await signIn();
    await page.goto(`${t.url}/console/bots/${bot.botId}/conversations`);
    const adaRow = page.getByRole('row').filter({ hasText: 'Ada Lovelace' });
    await adaRow.getByText('Bot: You said: ok').waitFor();
    assert.equal(
      await adaRow.getByRole('link', { name: 'Ada Lovelace' }).getAttribute('href'),
      `/console/bots/${bot.botId}/conversations/${ada.runtimeConversationId}`,
    );
    const visitorRow = page
      .getByRole('row')
      .filter({ hasText: `Visitor …${visitor.runtimeUserId.slice(-6)}` });
    await visitorRow.getByText('Bot: echo: write a haiku').waitFor();
    await shot(page, '03-conversations');
    await page.close();
  });

  test('the bots list has a status column', async () => {
    const page = await signIn();
    const row = page.getByRole('row').filter({ hasText: 'turns-bot' });
    await row.waitFor();
    const headers = (await page.getByRole('columnheader').allTextContents()).map((h) => h.trim());
    assert.ok(headers.includes('Status'), JSON.stringify(headers));
    assert.equal((await row.locator('.status').textContent())?.trim(), 'active');
    await shot(page, '04-bots');
    await page.close();
  });

  test('try it: a choice chip clicked sends its value, and the bot answers it', async () => {
    const page = await signIn();
    await page.goto(`${t.url}/console/bots/${bot.botId}/try`);
    await page.getByRole('textbox', { name: 'Message' }).fill('menu');
    await page.keyboard.press('Enter');
    const messages = page.getByRole('list', { name: 'Messages' });
    const chip = messages.getByRole('button', { name: 'Track an order' });
    await chip.waitFor({ timeout: 10_000 });
    await chip.click();
    await messages.locator('.from-user p.text').getByText('track', { exact: true }).waitFor();
    await messages.locator('.from-bot').getByText('Your parcel ships today').waitFor({ timeout: 10_000 });
    await shot(page, '05-try-it-choice');
    assert.deepEqual(browser.cspViolations, []);
    await page.close();
  });
});
