// The console's inbox (issue 35), as an agent and a viewer use it: a bot's handoff card puts a visitor's
// conversation in the queue, which shows it without a reload; an agent (a member with the agent role,
// signed in with their own token) takes it, answers with words and with choices, sees the visitor's next
// message arrive, and resolves it; the visitor hears the agent by name through @botpress/chat and the bot
// again after. A viewer reads the queue and the conversation but has nothing to answer with. In Debian's
// Chromium; screens saved under test/e2e/artifacts/inbox/ (and /tmp/inbox-shots/) to be looked at.
import assert from 'node:assert/strict';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type * as chat from '@botpress/chat';
import type { Page } from 'playwright-core';
import { deployPackage, json, replies, send, startChat, waitForReplies } from '../helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from '../helpers/deployed-bots.ts';
import { adminAs } from '../helpers/handoffs.ts';
import { parleyAdmin } from '../helpers/parley-client.ts';
import { waitFor } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { webchatClientId } from '../helpers/webchat.ts';
import { ensureConsoleBuilt, launchChromium, screenshots } from './browser.ts';
import type { Browser } from './browser.ts';

/** Where the screens are copied too, for a person (and the docs) to look at. */
const SHOTS = process.env.INBOX_SHOTS ?? '/tmp/inbox-shots';

/** A bot that hands over on "I want a person", answers anything else, and says it is back after. */
const HANDOFF_BOT = {
  'bot.json': json({ formatVersion: 1, name: 'shop-assistant' }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'route' },
      {
        id: 'route',
        type: 'standard',
        cards: [
          { type: 'expression', condition: "event.preview === 'I want a person'", to: 'handover' },
          { type: 'say', message: { type: 'text', text: 'The bot answers: {{ event.preview }}' } },
        ],
      },
      {
        id: 'handover',
        type: 'standard',
        cards: [
          {
            type: 'handoff',
            reason: 'The visitor asked for a person about a late order',
            team: 'support',
            message: 'Connecting you to a person…',
            onResolved: 'back',
          },
        ],
      },
      {
        id: 'back',
        type: 'standard',
        cards: [{ type: 'say', message: { type: 'text', text: 'The bot is back. Anything else?' } }],
      },
    ],
  }),
};

describe('console: the handoff inbox (sqlite, Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let bot: DeployedBot;
  let shot: (page: Page, name: string) => Promise<void>;
  let agent: { email: string; token: string };
  let viewer: { email: string; token: string };

  /** A member of the test workspace with `role`, and a personal access token of theirs. */
  async function member(email: string, role: 'agent' | 'viewer'): Promise<{ email: string; token: string }> {
    await parleyAdmin(t).createWorkspaceMember({ email, role });
    const account = await t.server.domain.accounts.findByEmail(email);
    assert.ok(account);
    return { email, token: (await t.server.domain.accounts.createToken(account.id, 'inbox test')).value };
  }

  before(async () => {
    ensureConsoleBuilt();
    const saved = await screenshots('inbox');
    await mkdir(SHOTS, { recursive: true });
    shot = async (page, name) => {
      await saved(page, name);
      await copyFile(
        path.resolve('test/e2e/artifacts/inbox', `${name}.png`),
        path.join(SHOTS, `${name}.png`),
      );
    };
    t = await startTestServer({ name: 'sqlite' });
    bot = await deployPackage(t, HANDOFF_BOT);
    agent = await member('ada@example.com', 'agent');
    viewer = await member('victor@example.com', 'viewer');
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signIn(token: string): Promise<Page> {
    const page = await browser.page();
    await page.goto(t.url);
    await page.waitForURL(/\/console\/sign-in/);
    await page.getByLabel('Personal access token').fill(token);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/bots$/);
    return page;
  }

  /** The Inbox link of the navigation, with its count of waiting handoffs. */
  const inboxLink = (page: Page) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Inbox/ });

  test('an agent takes a handoff from the live queue, answers, sees the visitor, and resolves it; the bot resumes', async () => {
    const page = await signIn(agent.token);
    // An agent changes no bot: the bots list offers none of a developer's controls.
    await page.getByRole('row').filter({ hasText: 'shop-assistant' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'New bot' }).count(), 0);
    await inboxLink(page).click();
    await page.waitForURL(/\/console\/inbox$/);
    await page.getByText('Nobody is waiting').waitFor();
    // A mark on the document: it is still there below only if the page was never reloaded.
    await page.evaluate("document.body.setAttribute('data-since', 'opened')");

    const visitor: Chatter = await startChat(bot);
    const listener = await visitor.chat.listenConversation({ id: visitor.conversationId });
    const heard: chat.Message[] = [];
    listener.on('message_created', (m) => heard.push(m));
    try {
      await send(visitor, 'I want a person');
      assert.deepEqual(await waitForReplies(bot, visitor, 1), ['Connecting you to a person…']);

      // The handoff appears in the queue, and the navigation counts it, without a reload.
      const waiting = page.getByRole('region', { name: 'Waiting' });
      const row = waiting
        .getByRole('row')
        .filter({ hasText: 'The visitor asked for a person about a late order' });
      await row.waitFor({ timeout: 10_000 });
      assert.equal(await page.locator('body').getAttribute('data-since'), 'opened', 'no reload');
      assert.match((await row.textContent()) ?? '', /shop-assistant.*support/);
      assert.equal((await inboxLink(page).locator('.count').textContent())?.trim(), '1');
      await shot(page, '01-queue');

      // Open it: the conversation so far, and "Take it".
      await row.getByRole('link').click();
      const conversation = page.getByRole('list', { name: 'Conversation' });
      await conversation.getByText('I want a person').waitFor();
      await conversation.getByText('Connecting you to a person…').waitFor();
      assert.equal(
        await page.getByRole('textbox', { name: 'Message', exact: true }).count(),
        0,
        'no composer before taking it',
      );
      await page.getByRole('button', { name: 'Take it' }).click();

      // Once it is the agent's: the composer, Transfer, Resolve; the queue counts nothing waiting.
      const message = page.getByRole('textbox', { name: 'Message', exact: true });
      await message.waitFor();
      await page.getByRole('button', { name: 'Resolve' }).waitFor();
      await page.getByRole('combobox', { name: 'Transfer to' }).waitFor();
      await waitFor('the badge to go', async () => (await inboxLink(page).locator('.count').count()) === 0);

      await message.fill('Hi, I am Ada from support. Let me look at your order.');
      await page.keyboard.press('Enter');
      await conversation.getByText('Hi, I am Ada from support.', { exact: false }).waitFor();

      // The visitor hears the agent, from the agent's user, by the agent's name.
      const fromAgent = await waitFor('the agent’s words to reach the visitor', async () =>
        heard.find((m) => m.payload.type === 'text' && m.payload.text.startsWith('Hi, I am Ada')),
      );
      const { participants } = await visitor.chat.listParticipants({
        conversationId: visitor.conversationId,
      });
      assert.ok(
        participants.some((p) => p.id === fromAgent.userId && p.name === agent.email),
        JSON.stringify(participants),
      );

      // Choices: the agent's question with options the visitor can click.
      await page.getByRole('button', { name: 'Add choices or a link' }).click();
      await message.fill('Which order is it?');
      await page
        .getByLabel('Choices', { exact: false })
        .and(page.locator('textarea'))
        .fill('The shoes\nThe jacket');
      await page.getByRole('button', { name: 'Send' }).click();
      const choice = await waitFor('the choices to reach the visitor', async () =>
        heard.find((m) => m.payload.type === 'choice'),
      );
      assert.equal(choice.userId, fromAgent.userId);
      assert.deepEqual(choice.payload.type === 'choice' && choice.payload.options, [
        { label: 'The shoes', value: 'The shoes' },
        { label: 'The jacket', value: 'The jacket' },
      ]);
      await conversation.getByRole('list', { name: 'choice' }).getByText('The jacket').waitFor();

      // A link: the file goes after the words, as a file message.
      await page.getByRole('button', { name: 'Add choices or a link' }).click();
      await message.fill('Here is your invoice.');
      await page.getByRole('textbox', { name: /^Link/ }).fill('https://example.com/files/invoice-1042.pdf');
      await page.getByRole('button', { name: 'Send' }).click();
      const file = await waitFor('the file to reach the visitor', async () =>
        heard.find((m) => m.payload.type === 'file'),
      );
      assert.deepEqual(file.payload, {
        type: 'file',
        fileUrl: 'https://example.com/files/invoice-1042.pdf',
        title: 'invoice-1042.pdf',
      });
      assert.ok(heard.some((m) => m.payload.type === 'text' && m.payload.text === 'Here is your invoice.'));
      await conversation.getByRole('link', { name: /invoice-1042\.pdf/ }).waitFor();

      // The visitor answers: it appears in the inbox by itself, and the bot does not answer it.
      await send(visitor, 'The jacket, ordered last Monday');
      await conversation.getByText('The jacket, ordered last Monday').waitFor({ timeout: 10_000 });
      assert.equal(await page.locator('body').getAttribute('data-since'), 'opened', 'no reload');
      assert.deepEqual(await replies(bot, visitor), ['Connecting you to a person…']);
      await message.fill('It ships tomorrow. I hand you back to the assistant.');
      await page.keyboard.press('Enter');
      await conversation.getByText('It ships tomorrow.', { exact: false }).waitFor();
      await shot(page, '02-answering');

      // Resolve: the bot has the conversation again and says so; the screen says it is closed.
      await page.getByRole('button', { name: 'Resolve' }).click();
      await page.getByText('This handoff is resolved').waitFor();
      await conversation.getByText('The bot is back. Anything else?').waitFor();
      assert.equal(
        await page.getByRole('textbox', { name: 'Message', exact: true }).count(),
        0,
        'no composer once resolved',
      );
      await waitFor('the bot’s reply to reach the visitor', async () =>
        heard.find((m) => m.payload.type === 'text' && m.payload.text === 'The bot is back. Anything else?'),
      );
      await send(visitor, 'no thanks');
      assert.equal((await waitForReplies(bot, visitor, 3)).at(-1), 'The bot answers: no thanks');
      await shot(page, '03-resolved');
      assert.deepEqual(browser.cspViolations, []);
    } finally {
      await listener.disconnect();
      await page.close();
    }
  });

  test('a viewer reads the queue and the conversation, with nothing to take or answer with', async () => {
    const visitor = await startChat(bot);
    await send(visitor, 'I want a person');
    await waitForReplies(bot, visitor, 1);
    const page = await signIn(viewer.token);
    await inboxLink(page).click();
    await page
      .getByText('Read only: your role (viewer) may read these conversations but not answer them.')
      .waitFor();
    const row = page
      .getByRole('region', { name: 'Waiting' })
      .getByRole('row')
      .filter({ hasText: 'late order' });
    await row.getByRole('link').click();
    await page.getByRole('list', { name: 'Conversation' }).getByText('I want a person').waitFor();
    await page.getByText('Read only: your role (viewer) may not answer handoffs.').waitFor();
    for (const name of ['Take it', 'Take over', 'Resolve', 'Send', 'Transfer'])
      assert.equal(await page.getByRole('button', { name }).count(), 0, `no "${name}" for a viewer`);
    assert.equal(await page.getByRole('textbox', { name: 'Message', exact: true }).count(), 0);
    await shot(page, '04-viewer');
    await page.close();
  });
  test('the owner takes the waiting handoff and transfers it to the agent, who then has it', async () => {
    const page = await signIn(t.token);
    await inboxLink(page).click();
    const row = page
      .getByRole('region', { name: 'Waiting' })
      .getByRole('row')
      .filter({ hasText: 'late order' });
    await row.getByRole('link').click();
    await page.getByRole('button', { name: 'Take it' }).click();
    const to = page.getByRole('combobox', { name: 'Transfer to' });
    await to.selectOption({ label: `${agent.email} (agent)` });
    // Only members who may answer are offered: the viewer is not.
    assert.equal(await to.locator('option', { hasText: viewer.email }).count(), 0);
    await page.getByRole('button', { name: 'Transfer' }).click();
    await page.getByText(`${agent.email} has it: take it over to answer.`).waitFor();
    await page.getByRole('button', { name: 'Take over' }).waitFor();
    assert.equal(await page.getByRole('textbox', { name: 'Message', exact: true }).count(), 0);
    await shot(page, '05-transferred');
    await page.close();
  });

  test('the official webchat (the share page) draws the agent’s messages as the agent’s, not the bot’s', async () => {
    const since = new Date().toISOString();
    const page = await browser.page();
    await page.goto(`${t.url}/s/${await webchatClientId(t, bot.botId)}`);
    const box = page.getByRole('textbox');
    await box.fill('I want a person');
    await box.press('Enter');
    await page.getByText('Connecting you to a person…').waitFor();
    const ada = adminAs(t, agent.token, t.workspaceId);
    const handoff = await waitFor('the webchat visitor’s handoff', async () =>
      (await ada.listHandoffs({ id: bot.botId, status: 'pending' })).handoffs.find(
        (h) => h.createdAt > since,
      ),
    );
    await ada.assignHandoff({ id: bot.botId, handoffId: handoff.id });
    await ada.createHandoffMessage({
      id: bot.botId,
      handoffId: handoff.id,
      payload: { type: 'text', text: 'Hello from a person at the shop.' },
    });
    // The webchat (4.5) draws a participant's message with the participant's avatar: the agent's
    // initial (the first letter of their name, their email here), not the bot's. It learns the agent's
    // name from the participant_added signal of the take.
    const avatarOf = (text: string) =>
      page
        .locator('.bpMessageContainer', { hasText: text })
        .locator('.bpMessageAvatarFallback')
        .textContent()
        .then((s) => s?.trim());
    await page.getByText('Hello from a person at the shop.').waitFor();
    assert.equal(await avatarOf('Hello from a person at the shop.'), agent.email.charAt(0));
    assert.equal(await avatarOf('Connecting you to a person…'), 's');
    await page.waitForTimeout(500);
    await shot(page, '06-webchat-agent');
    await ada.resolveHandoff({ id: bot.botId, handoffId: handoff.id });
    await page.getByText('The bot is back. Anything else?').waitFor();
    await page.close();
  });
});
