// The web console, used as an operator uses it: a real Parley server, a bot deployed with the CLI and
// talked to over the Chat API, and Debian's Chromium clicking through the console. Every screen is saved
// under test/e2e/artifacts/console/ to be looked at.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { UnauthorizedError } from '@botpress/client';
import type { Locator, Page } from 'playwright-core';
import { deployPackage, json, send, sendAndWait, startChat } from '../helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from '../helpers/deployed-bots.ts';
import { parleySettings, startModelServer } from '../helpers/model-server.ts';
import type { ModelServer } from '../helpers/model-server.ts';
import { rejectsWith, waitFor } from '../helpers/runtime.ts';
import { adminCall, startReceiver } from '../helpers/webhooks.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { ensureConsoleBuilt, launchChromium, screenshots } from './browser.ts';
import type { Browser } from './browser.ts';

const PHONE = { width: 390, height: 844 };

/**
 * A bot with something to show: a text reply, a choice and a card, log lines, a turn that fails, and a
 * model's answer (from the tests' model server).
 */
const SHOWCASE_BOT = {
  'actions/ask.json': json({ input: { type: 'object' }, output: { type: 'object' } }),
  'actions/ask.ts':
    "const ask = { role: 'user', type: 'text', content: input.question };\n" +
    "const { output } = await client.generateText({ model: 'fast', messages: [ask] });\n" +
    'return { text: output };\n',
  'bot.json': json({
    formatVersion: 1,
    name: 'support-bot',
    description: 'Answers, offers choices, and fails when asked to.',
    configuration: { variables: { greeting: { type: 'string', default: 'Hello' } } },
  }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'route' },
      {
        id: 'route',
        type: 'standard',
        cards: [
          {
            type: 'code',
            code:
              "console.info('turn for: ' + event.preview);\n" +
              "if (event.preview === 'fail') throw new Error('the order service is down');\n",
          },
        ],
        next: [
          { when: "event.preview === 'menu'", to: 'menu' },
          { when: "event.preview.startsWith('ask ')", to: 'ask' },
          { to: 'echo' },
        ],
      },
      {
        id: 'menu',
        type: 'standard',
        cards: [
          {
            type: 'say',
            message: {
              type: 'choice',
              text: 'What do you need?',
              options: [
                { label: 'Track an order', value: 'track' },
                { label: 'Talk to a person', value: 'human' },
              ],
            },
          },
          {
            type: 'say',
            message: {
              type: 'card',
              title: 'Parley help center',
              subtitle: 'Guides and answers',
              actions: [{ action: 'url', label: 'Open', value: 'https://example.com/help' }],
            },
          },
        ],
      },
      {
        id: 'ask',
        type: 'standard',
        cards: [
          {
            type: 'action',
            action: 'ask',
            input: { question: '{{ event.preview }}' },
            output: 'workflow.answer',
          },
          { type: 'say', message: { type: 'text', text: '{{ workflow.answer.text }}' } },
        ],
      },
      {
        id: 'echo',
        type: 'standard',
        cards: [
          {
            type: 'say',
            message: { type: 'text', text: '{{ env.greeting }}! You said: {{ event.preview }}' },
          },
        ],
      },
    ],
  }),
};

/**
 * Reloads the page until `target` shows: what a list shows is what it read when it rendered, which
 * happens after the page's load (so each reload waits a little for it).
 */
async function shownAfterReload(page: Page, target: Locator, what: string): Promise<void> {
  await waitFor(
    what,
    async () => {
      await page.reload();
      return target.waitFor({ timeout: 2000 }).then(
        () => true,
        () => false,
      );
    },
    15_000,
    500,
  );
}

describe('web console (sqlite, Chromium)', () => {
  let t: TestServer;
  let models: ModelServer;
  let browser: Browser;
  let bot: DeployedBot;
  let chat: Chatter;
  let shot: (page: Page, name: string) => Promise<void>;
  let emails = 0;

  before(async () => {
    ensureConsoleBuilt();
    shot = await screenshots('console');
    models = await startModelServer();
    // The receivers and model servers of these tests are on loopback.
    t = await startTestServer(
      { name: 'sqlite' },
      { webhookPrivateTargets: 'on', llmPrivateTargets: 'on', ...parleySettings(models) },
    );
    bot = await deployPackage(t, SHOWCASE_BOT);
    chat = await startChat(bot);
    await sendAndWait(bot, chat, 'hello');
    await sendAndWait(bot, chat, 'menu');
    await sendAndWait(bot, chat, 'fail');
    // Another visitor asks the model: the overview counts the call.
    await sendAndWait(bot, await startChat(bot), 'ask what is parley');
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await models?.close();
  });

  /** A member of the test workspace with `role`, and a personal access token of theirs. */
  async function member(
    role: 'viewer' | 'developer',
  ): Promise<{ token: string; email: string; memberId: string }> {
    const email = `${role}-${++emails}@example.com`;
    const created = await t.client().createWorkspaceMember({ email, role });
    const account = await t.server.domain.accounts.findByEmail(email);
    assert.ok(account);
    const { value } = await t.server.domain.accounts.createToken(account.id, 'console test');
    return { token: value, email, memberId: created.id };
  }

  /** Opens the console in a new tab and signs in with `token`, by keyboard. */
  async function signIn(token: string, size?: { width: number; height: number }): Promise<Page> {
    const page = await browser.page(size);
    await page.goto(t.url);
    await page.waitForURL(/\/console\/sign-in/);
    await page.getByLabel('Personal access token').fill(token);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/bots$/);
    return page;
  }

  test('GET / leads to the sign-in page; a wrong token is refused there', async () => {
    const page = await browser.page();
    const response = await page.goto(t.url);
    assert.equal(response?.status(), 200);
    await page.waitForURL(`${t.url}/console/sign-in?next=%2Fconsole%2F`);
    await page.getByLabel('Personal access token').fill('bp_pat_not_a_real_token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('This token is not accepted').waitFor();
    await shot(page, '01-sign-in-refused');
    assert.match(page.url(), /\/console\/sign-in/);
    await page.close();
  });

  test('signing in lists the bots of the workspace', async () => {
    const page = await signIn(t.token);
    const row = page.getByRole('row').filter({ hasText: 'support-bot' });
    await row.waitFor();
    assert.equal(
      await page.getByRole('link', { name: 'support-bot' }).getAttribute('href'),
      `/console/bots/${bot.botId}`,
    );
    await shot(page, '02-bots');

    // By keyboard: the first stop is the skip link; tabbing on reaches the bot, Enter opens it.
    await page.keyboard.press('Tab');
    assert.equal(await page.locator(':focus').textContent(), 'Skip to content');
    for (let i = 0; i < 15; i++) {
      await page.keyboard.press('Tab');
      if ((await page.locator(':focus').textContent()) === 'support-bot') break;
    }
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/console/bots/${bot.botId}$`));
    await page.getByText('turns failed').waitFor();
    const failed = page.locator('.stat.warn .value');
    assert.equal(await failed.textContent(), '1', 'the failed turn is counted');
    await page.getByRole('list', { name: 'Messages per hour over the last day' }).waitFor();
    const modelCalls = page.getByLabel('Model calls');
    assert.equal(
      await modelCalls
        .locator('.stat')
        .filter({ hasText: 'model calls' })
        .first()
        .locator('.value')
        .textContent(),
      '1',
      'the model call is counted',
    );
    await shot(page, '03-bot-overview');
    await page.close();
  });

  test('a transcript shows every message and the failed turn, and a new message arrives live', async () => {
    const page = await signIn(t.token);
    await page.goto(`${t.url}/console/bots/${bot.botId}/conversations`);
    // Filtered by a user who never wrote: nothing; by the customer: their conversation.
    await page.getByLabel('User id').fill('user_nobody');
    await page.getByLabel('User id').press('Enter');
    await page.getByText('No conversation matches these filters').waitFor();
    await page.getByLabel('User id').fill(chat.runtimeUserId);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(new RegExp(`user=${chat.runtimeUserId}`));
    await page.getByRole('link', { name: chat.runtimeConversationId }).click();
    await page.waitForURL(new RegExp(`/conversations/${chat.runtimeConversationId}$`));

    const transcript = page.locator('ol.transcript');
    await transcript.getByText('Hello! You said: hello').waitFor();
    await transcript.getByText('What do you need?').waitFor();
    await transcript.getByText('Track an order').waitFor();
    await transcript.getByText('Parley help center').waitFor();
    const failedTurn = page.locator('.turn.failed');
    await failedTurn.getByText(/Turn failed:.*the order service is down/).waitFor();
    await failedTurn.locator('.log-lines').getByText('turn for: fail').waitFor();
    await shot(page, '04-transcript');

    // While the page is open, the customer writes again: the message and the reply appear by themselves.
    await send(chat, 'where is my parcel?');
    await transcript.getByText('where is my parcel?', { exact: true }).waitFor({ timeout: 10_000 });
    await transcript.getByText('Hello! You said: where is my parcel?').waitFor({ timeout: 10_000 });
    await transcript
      .locator('.log-lines')
      .getByText('turn for: where is my parcel?')
      .waitFor({ timeout: 10_000 });
    await shot(page, '05-transcript-live');

    await page.setViewportSize(PHONE);
    await shot(page, '06-transcript-phone');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, '06-transcript-phone-dark');
    await page.close();
  });

  test('the logs follow the bot live, filtered by level and text', async () => {
    const page = await signIn(t.token);
    await page.goto(`${t.url}/console/bots/${bot.botId}/logs`);
    const tail = page.getByRole('list', { name: 'Log lines' });
    await tail.getByText('turn for: hello').waitFor();
    await send(chat, 'logged live');
    await tail.getByText('turn for: logged live').waitFor({ timeout: 10_000 });
    await shot(page, '07-logs');

    await page.getByLabel('Level').selectOption('error');
    await page.waitForURL(/level=error/);
    // The list is replaced as the filtered lines arrive: wait for it, not for its first line.
    await waitFor('only error lines', async () => {
      const levels = await tail.locator('.level').allTextContents();
      return levels.length > 0 && levels.every((l) => l === 'error');
    });

    await page.getByLabel('Level').selectOption('');
    await page.getByLabel('Text').fill('parcel');
    await page.getByLabel('Text').press('Enter');
    await page.waitForURL(/q=parcel/);
    await waitFor('only the lines with the text', async () => {
      const messages = await tail.locator('.message').allTextContents();
      return messages.length > 0 && messages.every((m) => m.includes('parcel'));
    });
    await page.close();
  });

  test('a lost network shows a retry, which works once the network is back', async () => {
    const page = await signIn(t.token);
    await page.context().setOffline(true);
    await page.getByRole('link', { name: 'Members' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('The server cannot be reached').waitFor();
    await shot(page, '17-offline');
    await page.context().setOffline(false);
    await alert.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('table').getByText('owner@parley.local').waitFor();
    await page.close();
  });

  test('try it: a chat with the bot in the console', async () => {
    const page = await signIn(t.token);
    await page.goto(`${t.url}/console/bots/${bot.botId}/try`);
    const input = page.getByRole('textbox', { name: 'Message' });
    await input.fill('menu');
    await page.keyboard.press('Enter');
    const messages = page.getByRole('list', { name: 'Messages' });
    await messages.getByText('What do you need?').waitFor({ timeout: 10_000 });
    await input.fill('hi there');
    await page.keyboard.press('Enter');
    await messages.getByText('Hello! You said: hi there').waitFor({ timeout: 10_000 });
    await shot(page, '08-try-it');
    await page.getByRole('link', { name: "Open this conversation's transcript" }).click();
    await page.locator('ol.transcript').getByText('Hello! You said: hi there').waitFor();
    await page.close();
  });

  test('an API key is created, shown once, works, and once revoked gets 401 on the Runtime API', async () => {
    const page = await signIn(t.token);
    await page.goto(`${t.url}/console/bots/${bot.botId}/keys`);
    await page.getByLabel('Note').fill('warehouse sync');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('.shown-once code');
    await shown.waitFor();
    const value = (await shown.textContent()) ?? '';
    assert.match(value, /^bp_bak_/);
    await page.getByRole('row').filter({ hasText: 'warehouse sync' }).waitFor();
    await shot(page, '09-api-key-created');

    const asBot = t.client({ token: value, botId: bot.botId, workspaceId: undefined });
    await asBot.listConversations({});
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.locator('.shown-once').count(), 0, 'the value is gone once dismissed');

    const row = page.getByRole('row').filter({ hasText: 'warehouse sync' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.waitFor({ state: 'detached' });
    await rejectsWith(asBot.listConversations({}), UnauthorizedError);
    await page.close();
  });

  test('webhooks: the incoming URL and installed integrations show; a subscription is made, its secret shown once, its deliveries reported', async () => {
    const receiver = await startReceiver();
    try {
      // An integration that answers every call (register included) with a 200.
      const { integration } = await t.client().createIntegration({
        name: 'console-channel',
        version: '1.2.3',
        code: 'module.exports = { handler: async () => ({ status: 200 }) };',
      });
      await t.client().updateBot({
        id: bot.botId,
        integrations: { [integration.id]: { enabled: true, configuration: {} } },
      });
      const page = await signIn(t.token);
      await page.goto(`${t.url}/console/bots/${bot.botId}/webhooks`);
      const { webhook } = (await adminCall(t, 'GET', `/bots/${bot.botId}/webhook`)).body as {
        webhook: { url: string };
      };
      await page.getByText(webhook.url).waitFor();
      const installed = page.getByRole('row').filter({ hasText: 'console-channel 1.2.3' });
      await shownAfterReload(
        page,
        installed.getByText('Registered'),
        'the integration to show as registered',
      );
      await page.getByRole('textbox', { name: 'Receiver URL' }).fill(`${receiver.url}/events`);
      await page.getByLabel('Event types').fill('order_paid');
      await page.getByRole('button', { name: 'Subscribe' }).click();
      const shown = page.locator('.shown-once code');
      await shown.waitFor();
      assert.match((await shown.textContent()) ?? '', /^whsec_/);
      await page.getByRole('button', { name: 'Done' }).click();

      await bot.client.createEvent({ type: 'order_paid', payload: { order: 1 } });
      await waitFor('the delivery', async () => receiver.received.length > 0, 15_000);
      const row = page.getByRole('row').filter({ hasText: `${receiver.url}/events` });
      // The list shows what it read; a reload reads the delivery's outcome.
      await shownAfterReload(page, row.getByText('Delivered (HTTP 200)'), 'the delivery to show');
      await shot(page, '18-webhooks');
      await row.getByRole('button', { name: 'Delete' }).click();
      await row.getByRole('button', { name: /^Yes/ }).click();
      await row.waitFor({ state: 'detached' });
      await page.close();
    } finally {
      await receiver.close();
    }
  });

  test('settings: a configuration variable is changed; secrets show by name only', async () => {
    await t.client().updateBot({ id: bot.botId, secrets: { ORDERS_API_KEY: 'sk-live-123' } });
    const page = await signIn(t.token);
    await page.goto(`${t.url}/console/bots/${bot.botId}/settings`);
    await page.getByText('ORDERS_API_KEY').waitFor();
    assert.equal(await page.getByText('sk-live-123').count(), 0, 'a secret value never reaches the page');
    await page.getByLabel('Value of greeting').fill('Welcome');
    await page.getByRole('button', { name: 'Save variables' }).click();
    await page.getByText('Saved.').waitFor();
    const { bot: saved } = await t.client().getBot({ id: bot.botId });
    assert.equal(saved.configuration.data.greeting, 'Welcome');
    await shot(page, '10-settings');
    await page.close();
  });

  test('models: a provider of the workspace is added (its key never shown), and a bot picks its best model there', async () => {
    const key = 'sk-console-provider-key-0123456789';
    const teamModels = await startModelServer({ models: ['team-large', 'team-small'], apiKey: key });
    try {
      const page = await signIn(t.token);
      await page.getByRole('link', { name: 'Models' }).click();
      await page.getByText('No providers of the workspace’s own').waitFor();
      await page.getByLabel('Name').fill('team');
      await page.getByLabel('Base URL').fill(teamModels.url);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Add provider' }).click();
      const row = page.getByRole('row').filter({ hasText: 'team-large' });
      await row.getByText('team-large, team-small (read)').waitFor();
      assert.equal(await page.getByText(key).count(), 0, 'the key never reaches the page');
      await shot(page, '19-models');

      await page.goto(`${t.url}/console/bots/${bot.botId}/settings`);
      await page.getByLabel('Best (and auto)').selectOption('team:team-large');
      await page.getByRole('button', { name: 'Save models' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const saved = (await adminCall(t, 'GET', `/bots/${bot.botId}/models`)).body as { best: string | null };
      assert.equal(saved.best, 'team:team-large');
      await page.getByRole('heading', { name: 'Models' }).scrollIntoViewIfNeeded();
      await shot(page, '20-bot-models');
      await page.close();
    } finally {
      await adminCall(t, 'PUT', `/bots/${bot.botId}/models`, { best: null });
      await teamModels.close();
    }
  });

  test('members and personal access tokens', async () => {
    await member('viewer');
    const page = await signIn(t.token);
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('row').filter({ hasText: 'viewer-' }).first().waitFor();
    await shot(page, '11-members');
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByLabel('Note').fill('laptop CLI');
    await page.getByRole('button', { name: 'Create token' }).click();
    const value = (await page.locator('.shown-once code').textContent()) ?? '';
    assert.match(value, /^bp_pat_/);
    await t.client({ token: value }).getAccount({});
    await shot(page, '12-tokens');
    await page.close();
  });

  test('a viewer sees no write buttons', async () => {
    const viewer = await member('viewer');
    const page = await signIn(viewer.token);
    await page.getByRole('link', { name: 'support-bot' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'New bot' }).count(), 0);
    await page.goto(`${t.url}/console/bots/${bot.botId}/settings`);
    await page.getByText('Read only: your role (viewer) may not change bots.').waitFor();
    for (const name of [
      'Save variables',
      'Add secret',
      'Set new value',
      'Delete bot',
      'Turn the channel off',
    ]) {
      assert.equal(await page.getByRole('button', { name }).count(), 0, `no "${name}" for a viewer`);
    }
    await shot(page, '13-viewer-settings');
    assert.equal(await page.getByRole('link', { name: 'API keys' }).count(), 0, 'no keys tab for a viewer');
    // Typed in, the keys' address shows why there is nothing to see.
    await page.goto(`${t.url}/console/bots/${bot.botId}/keys`);
    await page.getByRole('alert').getByText('Your role (viewer) may not do this').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
    await page.goto(`${t.url}/console/members`);
    await page.getByRole('table').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Add member' }).count(), 0);
    await page.close();
  });

  test('a write the role no longer allows shows the 403 explanation, and the button goes', async () => {
    const developer = await member('developer');
    const page = await signIn(developer.token, PHONE);
    await page.getByRole('button', { name: 'New bot' }).click();
    // Meanwhile a manager makes them a viewer: the page still offers what the old role could do.
    await t.client().updateWorkspaceMember({ id: developer.memberId, role: 'viewer' });
    await page.getByLabel('Name').fill('not allowed');
    await page.getByRole('button', { name: 'Create bot' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText(/may not do this/).waitFor();
    await alert
      .getByText(/The viewer role may not do this \(bots\.write needs developer or above\)/)
      .waitFor();
    await page.locator('.role').getByText('viewer').waitFor();
    assert.equal(await page.getByRole('button', { name: 'New bot' }).count(), 0, 'the role was read again');
    await shot(page, '14-forbidden-phone');
    assert.equal(
      (await t.client().listBots({})).bots.some((b) => b.name === 'not allowed'),
      false,
    );
    await page.close();
  });

  test('a token revoked while signed in returns to sign-in, and back after signing in again', async () => {
    const developer = await member('developer');
    const page = await signIn(developer.token);
    await page.goto(`${t.url}/console/bots/${bot.botId}/conversations`);
    await page.getByRole('table').waitFor();
    const account = await t.server.domain.accounts.findByEmail(developer.email);
    assert.ok(account);
    for (const pat of await t.server.domain.accounts.listTokens(account.id)) {
      await t.server.domain.accounts.deleteToken(account.id, pat.id);
    }
    // Opened as a person opens a link: whether the page had already noticed the revocation (a load it made
    // again when it became visible) or not, the next screen is the sign-in, which comes back here.
    await page.goto(`${t.url}/console/bots/${bot.botId}/logs`);
    await page.waitForURL(/\/console\/sign-in\?next=/);
    await page.getByText(/Signed out: The token is invalid or has been revoked/).waitFor();
    await shot(page, '15-signed-out');
    // The reason stays with the tab: read again, the sign-in still says why.
    await page.reload();
    await page.getByText(/Signed out: The token is invalid or has been revoked/).waitFor();

    const fresh = await t.server.domain.accounts.createToken(account.id, 'again');
    await page.getByLabel('Personal access token').fill(fresh.value);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/console/bots/${bot.botId}/logs$`));
    await page.close();
  });

  test('with several workspaces, sign-in asks which; an empty one tells how to deploy a first bot', async () => {
    const ws = await t.client().createWorkspace({ name: 'Empty one' });
    const page = await browser.page();
    await page.goto(`${t.url}/console/`);
    await page.getByLabel('Personal access token').fill(t.token);
    await page.keyboard.press('Enter');
    await page.getByLabel('Workspace').selectOption(ws.id);
    await page.getByRole('button', { name: 'Open workspace' }).click();
    await page.getByText('No bots yet').waitFor();
    await page.getByText(/parley -- deploy examples\/echo-bot/).waitFor();
    await shot(page, '16-empty-workspace');
    // The workspace can be switched from every screen.
    await page.getByLabel('Workspace').selectOption(t.workspaceId);
    await page.getByRole('link', { name: 'support-bot' }).waitFor();
    await page.close();
  });

  test('no page broke its Content Security Policy', () => {
    assert.deepEqual(browser.cspViolations, []);
  });
});
