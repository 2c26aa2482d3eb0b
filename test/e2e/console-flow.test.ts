// The console's Flow section (issue 38, its first step), in Debian's Chromium: examples/menu-bot deployed
// with the CLI opens as graphs, a tab per workflow, each node a box with its cards and each transition an
// arrow labelled with its condition; a node chosen shows its cards' JSON. A viewer sees it all (it is
// read-only), React Flow, running on Preact through preact/compat, breaks no Content Security Policy, and it
// is fetched (a chunk and a stylesheet of its own) only when the Flow tab opens.
// Screens are saved under test/e2e/artifacts/console-flow/ to be looked at.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { deployWithCli } from '../helpers/chat-bots.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { ensureConsoleBuilt, launchChromium, screenshots, signInToConsolePage } from './browser.ts';
import type { Browser } from './browser.ts';

describe('console: a bot’s flows (sqlite, Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let botId: string;
  let viewerToken: string;
  let shot: (page: Page, name: string) => Promise<void>;

  before(async () => {
    ensureConsoleBuilt();
    shot = await screenshots('console-flow');
    t = await startTestServer({ name: 'sqlite' });
    ({ botId } = await deployWithCli(t, 'examples/menu-bot'));
    const email = 'viewer@example.com';
    await t.client().createWorkspaceMember({ email, role: 'viewer' });
    const account = await t.server.domain.accounts.findByEmail(email);
    assert.ok(account);
    viewerToken = (await t.server.domain.accounts.createToken(account.id, 'flow test')).value;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Signs in with `token` and opens the bot's Flow section. */
  async function openFlow(token: string, size?: { width: number; height: number }): Promise<Page> {
    const page = await signInToConsolePage(browser, `${t.url}/console/bots/${botId}/flow`, token, size);
    await page.locator('.react-flow__node').first().waitFor();
    return page;
  }

  const nodeBox = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
  /** The ids of the nodes drawn. */
  const nodeIds = async (page: Page) =>
    Promise.all((await page.locator('.react-flow__node').all()).map((n) => n.getAttribute('data-id')));
  /** The labels of the arrows drawn, in the page's order. */
  const edgeLabels = (page: Page) => page.locator('.react-flow__edge-text').allTextContents();

  test('the main workflow: every node a box with its cards, the start marked, transitions labelled', async () => {
    const page = await openFlow(viewerToken);
    assert.equal(await page.getByRole('tab', { name: 'main' }).getAttribute('aria-selected'), 'true');
    assert.deepEqual(await page.getByRole('tab').allTextContents(), ['main', 'faq']);
    const ids = await nodeIds(page);
    assert.deepEqual(ids.sort(), ['askName', 'bye', 'done', 'faq', 'menu', 'start', 'welcome']);
    // The start node is marked; each card shows its type and what it does.
    await nodeBox(page, 'start').locator('.flow-node-start').waitFor();
    const menu = nodeBox(page, 'menu');
    assert.deepEqual(await menu.locator('li').allTextContents(), [
      'capture workflow.choice (choice) [FAQ | Tell you my name | Bye]',
      "expression if workflow.choice === 'faq' → faq",
      "expression if workflow.choice === 'name' → askName",
    ]);
    assert.deepEqual(await nodeBox(page, 'faq').locator('li').allTextContents(), ['goto faq']);
    assert.deepEqual(await nodeBox(page, 'bye').locator('li').allTextContents(), ['say Goodbye!']);
    // An arrow per pair of nodes: menu's two conditions, and its way to bye (the capture's onFailure and
    // the node's next, one arrow); plain `next` arrows have no label.
    assert.deepEqual((await edgeLabels(page)).sort(), [
      'onFailure',
      "workflow.choice === 'faq'",
      "workflow.choice === 'name'",
    ]);
    assert.equal(await page.locator('.react-flow__edge').count(), 8);
    await shot(page, '01-main');

    // Boxes do not overlap one another.
    const boxes = await Promise.all(
      (await page.locator('.react-flow__node').all()).map(async (n) => {
        const r = await n.boundingBox();
        assert.ok(r);
        return {
          id: await n.getAttribute('data-id'),
          left: r.x,
          top: r.y,
          right: r.x + r.width,
          bottom: r.y + r.height,
        };
      }),
    );
    for (const a of boxes)
      for (const b of boxes)
        if (a.id !== b.id)
          assert.ok(
            a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top,
            `${a.id} and ${b.id} overlap`,
          );

    // A node chosen shows its cards in full, as the package holds them.
    await menu.click();
    const details = page.getByRole('complementary', { name: 'Node menu' });
    await details.waitFor();
    assert.deepEqual(await details.getByRole('heading', { level: 3 }).allTextContents(), [
      'capture',
      'expression',
      'expression',
      'next',
    ]);
    // The capture card as the package's file holds it.
    const source = JSON.parse(await readFile('examples/menu-bot/workflows/main.json', 'utf8')) as {
      nodes: { id: string; cards?: unknown[] }[];
    };
    const written = source.nodes.find((n) => n.id === 'menu')?.cards?.[0];
    assert.ok(written);
    assert.deepEqual(JSON.parse((await details.locator('pre').first().textContent()) ?? ''), written);
    await shot(page, '02-menu-chosen');

    // Read-only: a node dragged stays where the layout put it (the drag pans the whole graph instead).
    const placed = () => menu.getAttribute('style');
    const before = await placed();
    const box = await menu.boundingBox();
    assert.ok(box);
    await page.mouse.move(box.x + 20, box.y + 10);
    await page.mouse.down();
    await page.mouse.move(box.x + 220, box.y + 140, { steps: 5 });
    await page.mouse.up();
    assert.equal(await placed(), before);
    await page.close();
  });

  test('another workflow in its tab: its entry and exit; a node chosen by keyboard', async () => {
    const page = await openFlow(t.token);
    await page.getByRole('tab', { name: 'faq' }).click();
    await nodeBox(page, 'entry').waitFor();
    const ids = await nodeIds(page);
    assert.deepEqual(ids.sort(), ['done', 'entry']);
    assert.deepEqual(await nodeBox(page, 'entry').locator('li').allTextContents(), [
      'capture workflow.question (text)',
      'code code/answer-faq.ts',
      'say {{ workflow.answer }}',
    ]);
    await page.getByText('A small FAQ without a table').waitFor();
    await nodeBox(page, 'entry').focus();
    await page.keyboard.press('Enter');
    await page
      .getByRole('complementary', { name: 'Node entry' })
      .getByText('"file": "code/answer-faq.ts"')
      .waitFor();
    await shot(page, '03-faq');
    await page.close();
  });

  test('on a phone the graph comes first, the node’s cards under it', async () => {
    const page = await openFlow(t.token, { width: 390, height: 844 });
    await nodeBox(page, 'welcome').click();
    await page.getByRole('complementary', { name: 'Node welcome' }).waitFor();
    await shot(page, '04-phone');
    await page.close();
  });

  test('the flow view, its libraries and its styles are fetched when its tab opens, not before', async () => {
    const page = await browser.page();
    const fetched: string[] = [];
    page.on('request', (request) => {
      const { pathname } = new URL(request.url());
      if (pathname.startsWith('/console/assets/')) fetched.push(pathname.slice('/console/assets/'.length));
    });
    await page.goto(`${t.url}/console/bots/${botId}`);
    await page.getByLabel('Personal access token').fill(t.token);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Flow', exact: true }).waitFor();
    /** The flow view's files fetched, without their hashes. */
    const flowAssets = () =>
      fetched
        .filter((file) => file.startsWith('flow-'))
        .map((file) => file.replace(/-[A-Z0-9]{8}\./, '.'))
        .sort();
    assert.deepEqual(flowAssets(), [], `the first load fetched ${fetched.join(', ')}`);

    await page.getByRole('link', { name: 'Flow', exact: true }).click();
    await nodeBox(page, 'start').waitFor();
    assert.deepEqual(flowAssets(), ['flow.css', 'flow.js']);
    // React Flow's styles (a node is placed absolutely) and the console's adaptation (no handle shown).
    const style = (selector: string, property: string) =>
      page.evaluate<string>(`getComputedStyle(document.querySelector('${selector}')).${property}`);
    assert.equal(await style('.react-flow__node', 'position'), 'absolute');
    assert.equal(await style('.react-flow__handle', 'visibility'), 'hidden');
    await page.close();
  });

  test('no page broke its Content Security Policy', () => {
    assert.deepEqual(browser.cspViolations, []);
  });
});
