// The console's Flow tab as a developer edits a bot (issue 38), in Debian's Chromium: examples/menu-bot
// deployed with the CLI opens as its draft; a node is added with a choice card (its form made from the
// card's JSON Schema) and a transition to it; a bad field shows `parley validate`'s message by the card
// and is fixed; the node dragged keeps its place in the saved draft; the changes from the deployed
// version are listed; the draft is talked to in the test panel (its path of nodes and cards and its
// variables by each turn, the node it stands at marked) while the bot still runs the deployed version; the
// draft deployed with a note is the bot's new version, whose new node answers
// through the Chat API; Versions lists it and rolls it back. A viewer sees the graph without editing.
// Screens are saved under test/e2e/artifacts/console-flow-edit/ to be looked at.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ChatSession, deployWithCli, textOf } from '../helpers/chat-bots.ts';
import { memberToken } from '../helpers/handoffs.ts';
import { parleyAdmin } from '../helpers/parley-client.ts';
import { waitFor } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { ensureConsoleBuilt, launchChromium, screenshots, signInToConsolePage } from './browser.ts';
import type { Browser } from './browser.ts';

describe('console: editing a bot’s flow (sqlite, Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let botId: string;
  let webhookUrl: string;
  let shot: (page: Page, name: string) => Promise<void>;

  before(async () => {
    ensureConsoleBuilt();
    shot = await screenshots('console-flow-edit');
    t = await startTestServer({ name: 'sqlite' });
    ({ botId, webhookUrl } = await deployWithCli(t, 'examples/menu-bot'));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function openFlow(token: string): Promise<Page> {
    const page = await signInToConsolePage(browser, `${t.url}/console/bots/${botId}/flow`, token, {
      width: 1400,
      height: 1000,
    });
    await page.locator('.react-flow__node').first().waitFor();
    return page;
  }

  const nodeBox = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);

  /** The bot's first reply to `text` in a new conversation, through the Chat API. */
  async function firstReply(text: string): Promise<string> {
    const chat = await ChatSession.open(webhookUrl);
    try {
      await chat.say(text);
      const [reply] = await chat.nextReplies(1);
      assert.ok(reply);
      return textOf(reply);
    } finally {
      await chat.close();
    }
  }

  test('a node with a choice card and a transition, a problem fixed, saved, deployed, answering, rolled back', async () => {
    const page = await openFlow(t.token);
    const state = page.getByRole('toolbar', { name: 'Draft' }).getByRole('status');
    await state.getByText('No draft yet').waitFor();
    await state.getByText('no problems').waitFor();
    await page.getByText('the code files of this draft hold the JavaScript compiled').waitFor();
    await shot(page, '01-opened');

    // A node, then a choice card in it: its form is the capture card's schema.
    await page.getByLabel('New node').fill('hours');
    await page.getByRole('button', { name: 'Add node' }).click();
    await nodeBox(page, 'hours').waitFor();
    const panel = page.getByRole('complementary', { name: 'Node hours' });
    await panel.waitFor();
    await panel.getByLabel('New card').selectOption('capture');
    await panel.getByRole('button', { name: 'Add card' }).click();
    const card = panel.locator('.flow-cards > li').first();
    assert.equal(await card.getByLabel('kind').inputValue(), 'choice');
    assert.deepEqual(await card.getByRole('combobox', { name: 'kind' }).locator('option').allTextContents(), [
      '—',
      'text',
      'number',
      'choice',
      'email',
    ]);
    await card.getByLabel('prompt').fill('Morning or evening?');
    await card.getByRole('button', { name: 'Add', exact: true }).click();
    await card.getByLabel('label').nth(0).fill('Morning');
    await card.getByLabel('value').nth(0).fill('morning');
    await card.getByRole('button', { name: 'Add', exact: true }).click();
    await card.getByLabel('label').nth(1).fill('Evening');
    await card.getByLabel('value').nth(1).fill('evening');
    // The card has no variable yet: the server's validation says so by the field, and in the list.
    await card.getByText('variable: is required').waitFor();
    await page
      .getByRole('list', { name: 'Problems' })
      .getByText('/nodes/7/cards/0/variable: is required')
      .waitFor();
    await nodeBox(page, 'hours').getByText('1 problem').waitFor();
    // A variable without its scope: the pattern parley validate reports.
    await card.getByLabel('variable').fill('slot');
    await card.getByText(/variable: must match \^\(workflow\|conversation\|user\|bot\)/).waitFor();
    await shot(page, '02-problem');
    await card.getByLabel('variable').fill('workflow.slot');
    await state.getByText('no problems').waitFor();
    assert.equal(await page.getByRole('list', { name: 'Problems' }).count(), 0);

    // A transition from start to the new node, taken when the user says "hours".
    await nodeBox(page, 'start').click();
    const start = page.getByRole('complementary', { name: 'Node start' });
    await start.getByLabel('To node').fill('hours');
    await start.getByLabel('When (a condition; empty: otherwise)').fill("event.payload.text === 'hours'");
    await start.getByRole('button', { name: 'Add transition' }).click();
    assert.deepEqual(
      (await start.locator('.flow-transitions li').allTextContents()).map((s) =>
        s.replace(/\s+/g, ' ').trim(),
      ),
      ["→ hours when event.payload.text === 'hours' Remove", '→ welcome otherwise Remove'],
    );
    // (A straight arrow's box has no width: attached, not 'visible'.)
    await page.locator('.react-flow__edge[data-id="start->hours"]').waitFor({ state: 'attached' });

    // The new node dragged aside: where it was left is part of the draft. The graph may still be moving
    // it (laid out again as the edits came), so the drag starts once it stands still, and is checked.
    const hours = nodeBox(page, 'hours');
    const box = await waitFor('the new node to stand still', async () => {
      const before = await hours.boundingBox();
      await page.waitForTimeout(150);
      const after = await hours.boundingBox();
      return before && after && before.x === after.x && before.y === after.y && after;
    });
    await page.mouse.move(box.x + 40, box.y + 12);
    await page.mouse.down();
    await page.mouse.move(box.x - 120, box.y + 72, { steps: 8 });
    await page.mouse.up();
    const moved = await hours.boundingBox();
    assert.ok(moved && Math.abs(moved.x - box.x) > 50, 'the node moved where it was dragged');
    await state.getByText('Unsaved changes').waitFor();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();
    const { draft } = await parleyAdmin(t).getBotDraft({ id: botId });
    assert.ok(draft.saved);
    assert.ok(draft.layout.main?.hours, 'the node’s place is kept');

    // What changed since the deployed version.
    await page.getByText(/Changes from the deployed version \(\d+\)/).click();
    const changes = await page.getByRole('list', { name: 'Changes' }).locator('li').allTextContents();
    assert.deepEqual(changes, [
      "main: transition start → hours added (event.payload.text === 'hours')",
      'main: node hours added',
      'main: hours: card capture added (workflow.slot (choice) [Morning | Evening])',
    ]);
    await shot(page, '03-saved-changes');

    // The draft tested in the panel: its new node answers there, each turn with its path and variables,
    // the node the conversation stands at marked on the graph; the deployed bot does not have it yet.
    const tester = page.getByRole('complementary', { name: 'Test the draft' });
    await tester.getByLabel('Message').fill('hours');
    await tester.getByLabel('Message').press('Enter');
    const turns = tester.getByRole('list', { name: 'Test turns' }).locator('.test-turn');
    await turns.first().getByText('Morning or evening?').waitFor();
    assert.equal(
      await turns.first().getByLabel('Path of this turn').textContent(),
      'main: start → hours (#0 capture)',
    );
    await nodeBox(page, 'hours').getByText('test is here').waitFor();
    await turns.first().getByRole('button', { name: 'Morning' }).click();
    await turns.nth(1).getByLabel('Path of this turn').getByText('main: hours').waitFor();
    await turns.nth(1).getByText('Variables after this turn').click();
    await turns.nth(1).getByText('"slot":"morning"').waitFor();
    await shot(page, '04-test-panel');
    await tester.screenshot({ path: 'test/e2e/artifacts/console-flow-edit/04-test-panel-close.png' });

    // Deployed with a note: a new version, whose new node answers.
    assert.notEqual(await firstReply('hours'), 'Morning or evening?');
    await page.getByRole('button', { name: 'Deploy…' }).click();
    await page.getByLabel('Note (what changed, and why)').fill('asks for opening hours');
    await shot(page, '05-deploy-confirm');
    await page.getByRole('button', { name: 'Yes, deploy' }).click();
    await page.getByText('Deployed as a new version').waitFor();
    assert.equal(await firstReply('hours'), 'Morning or evening?');

    // Versions lists it, deployed; the first one deployed again rolls the bot back.
    await page.getByRole('link', { name: 'Versions', exact: true }).click();
    const rows = page.locator('table tbody tr');
    await rows.first().getByText('asks for opening hours').waitFor();
    await rows.first().getByText('deployed').waitFor();
    await shot(page, '06-versions');
    await page.getByRole('button', { name: 'Deploy v1' }).click();
    await page.getByRole('button', { name: 'Yes, deploy v1' }).click();
    await page.getByText('v1 (version 1) is deployed').waitFor();
    assert.notEqual(await firstReply('hours'), 'Morning or evening?');
    // The draft stays, and says it is not what the bot runs now.
    await page.getByRole('link', { name: 'Flow', exact: true }).click();
    await page.getByText('The bot runs another version than the one this draft is based on').waitFor();
    await nodeBox(page, 'hours').waitFor();
    await shot(page, '07-after-rollback');
    await page.close();
  });

  test('a viewer sees the graph, without the draft’s controls', async () => {
    const page = await openFlow((await memberToken(t, 'viewer')).token);
    await nodeBox(page, 'menu').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Save draft' }).count(), 0);
    assert.equal(await page.getByLabel('New node').count(), 0);
    assert.equal(await page.getByRole('complementary', { name: 'Test the draft' }).count(), 0);
    await shot(page, '08-viewer');
    await page.close();
  });

  test('no page broke its Content Security Policy', () => {
    assert.deepEqual(browser.cspViolations, []);
  });
});
