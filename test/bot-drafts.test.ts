// Bots' drafts through the contract's client on both stores: a package deployed with `parley deploy`
// opens as a draft (its code files the compiled JavaScript), validation answers `parley validate`'s
// problems with their file and JSON pointer, a saved draft (and where its nodes are drawn) is kept, its
// deploy makes a version the bot then answers with, and viewers may read but not edit or deploy.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  deployPackage,
  json,
  replies,
  sendAndWait,
  startChat,
  writePackage,
} from './helpers/deployed-bots.ts';
import type { DeployedBot, Files } from './helpers/deployed-bots.ts';
import { memberToken } from './helpers/handoffs.ts';
import { parleyAdmin, parleyClient } from './helpers/parley-client.ts';
import { runParley } from './helpers/process.ts';
import { APIS } from '../src/contract/apis.ts';
import { HEADERS } from '../src/contract/headers.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const say = (text: string) => ({ type: 'say', message: { type: 'text', text } });

const PACKAGE: Files = {
  'bot.json': json({ formatVersion: 1, name: 'draft-bot' }),
  'code/shout.ts': 'const text: string = String(event.payload.text);\nworkflow.loud = text.toUpperCase();\n',
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'echo' },
      {
        id: 'echo',
        type: 'standard',
        cards: [{ type: 'code', file: 'code/shout.ts' }, say('v1: {{ workflow.loud }}')],
      },
    ],
  }),
};

interface Workflow {
  nodes: { id: string; type: string; cards?: unknown[]; next?: unknown }[];
}

/** `parley validate`'s lines for a package folder holding `files`. */
async function validateWithCli(files: Files): Promise<string[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-draft-'));
  try {
    await writePackage(dir, files);
    const proc = runParley(['validate', dir], {});
    assert.equal(await proc.exited, 1);
    return proc
      .output()
      .split('\n')
      .filter((line) => line.startsWith('  '))
      .map((line) => line.trim().slice(dir.length + 1));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

for (const store of await testStores()) {
  describe(`bot drafts (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await deployPackage(t, PACKAGE);
    });
    after(() => t.close());

    /** The Admin API through the contract's client as a new member with `role`. */
    const memberAdmin = async (role: 'viewer' | 'developer') =>
      parleyClient(t.url, APIS.admin, {
        [HEADERS.authorization]: `Bearer ${(await memberToken(t, role)).token}`,
        [HEADERS.workspaceId]: t.workspaceId,
      });

    test('a package deployed with parley deploy opens as an unsaved draft of its files, code compiled', async () => {
      const { draft } = await parleyAdmin(t).getBotDraft({ id: bot.botId });
      assert.equal(draft.saved, false);
      assert.equal(draft.codeFrom, 'compiled');
      assert.deepEqual(Object.keys(draft.files).sort(), ['bot.json', 'code/shout.ts', 'workflows/main.json']);
      assert.deepEqual(
        JSON.parse(draft.files['workflows/main.json'] ?? ''),
        JSON.parse(PACKAGE['workflows/main.json'] ?? ''),
      );
      // esbuild's JavaScript: the type annotation is gone, what the code does is not.
      assert.doesNotMatch(draft.files['code/shout.ts'] ?? '', /: string/);
      assert.match(draft.files['code/shout.ts'] ?? '', /toUpperCase/);
      const { versions } = await parleyAdmin(t).listBotVersions({ id: bot.botId });
      assert.equal(draft.baseVersionId, versions[0]?.id);
      // Its files validate as they are: the round trip loses nothing the package needs.
      assert.deepEqual(
        (await parleyAdmin(t).validateBotDraft({ id: bot.botId, files: draft.files })).problems,
        [],
      );
    });

    test('validation answers the problems parley validate prints, with file, line, column and field', async () => {
      const workflow = JSON.parse(PACKAGE['workflows/main.json'] ?? '') as Workflow;
      workflow.nodes.push({ id: 'extra', type: 'standard', cards: [{ type: 'say' }], next: 'nowhere' });
      const files = { ...PACKAGE, 'workflows/main.json': json(workflow) };
      const { problems } = await parleyAdmin(t).validateBotDraft({ id: bot.botId, files });
      assert.ok(problems.length >= 2, JSON.stringify(problems));
      const lines = problems.map(
        (p) => `${p.file}:${p.line}:${p.column} ${p.field ? `${p.field}: ` : ''}${p.message}`,
      );
      assert.deepEqual(lines, await validateWithCli(files));
      assert.ok(problems.some((p) => p.field === '/nodes/2/cards/0/message' && p.message === 'is required'));
    });

    test('a saved draft keeps its files and layout; its deploy is a new version the bot answers with', async () => {
      const admin = parleyAdmin(t);
      const workflow = JSON.parse(PACKAGE['workflows/main.json'] ?? '') as Workflow;
      workflow.nodes[1] = {
        id: 'echo',
        type: 'standard',
        cards: [say('v2 from the console: {{ event.payload.text }}')],
      };
      const { draft: start } = await admin.getBotDraft({ id: bot.botId });
      const files = { ...start.files, 'workflows/main.json': json(workflow) };
      const layout = { main: { echo: { x: 120, y: 240 } } };
      const saved = await admin.saveBotDraft({ id: bot.botId, files, layout });
      assert.deepEqual(saved.problems, []);
      const { draft } = await admin.getBotDraft({ id: bot.botId });
      assert.equal(draft.saved, true);
      assert.deepEqual(draft.layout, layout);
      assert.deepEqual(draft.files, files);

      const { versionId } = await admin.deployBotDraft({ id: bot.botId, note: 'from the console' });
      const { versions } = await admin.listBotVersions({ id: bot.botId });
      assert.equal(versions.length, 2);
      assert.deepEqual(
        { id: versions[0]?.id, description: versions[0]?.description, deployed: versions[0]?.deployed },
        { id: versionId, description: 'from the console', deployed: true },
      );
      assert.equal((await admin.getBotDraft({ id: bot.botId })).draft.baseVersionId, versionId);
      const c = await startChat(bot);
      assert.equal((await sendAndWait(bot, c, 'hi')).status, 'processed');
      assert.deepEqual(await replies(bot, c), ['v2 from the console: hi']);

      // Rolled back, the first version answers again.
      await admin.deployBotVersion({ id: bot.botId, versionId: versions[1]?.id ?? '' });
      assert.equal((await sendAndWait(bot, c, 'again')).status, 'processed');
      assert.deepEqual((await replies(bot, c)).slice(-1), ['v1: AGAIN']);
    });

    test('a draft with problems is saved but not deployed; discarding it opens the deployed package again', async () => {
      const admin = parleyAdmin(t);
      const files = {
        ...PACKAGE,
        'workflows/main.json': json({ nodes: [{ id: 'start', type: 'start', next: 'gone' }] }),
      };
      const saved = await admin.saveBotDraft({ id: bot.botId, files, layout: {} });
      assert.ok(
        saved.problems.some((p) => p.field === '/nodes/0/next'),
        JSON.stringify(saved.problems),
      );
      await assert.rejects(
        admin.deployBotDraft({ id: bot.botId }),
        /answered 400: .*The draft has 1 problem.*"problems"/,
      );
      assert.equal((await admin.listBotVersions({ id: bot.botId })).versions.length, 2);
      await admin.discardBotDraft({ id: bot.botId });
      const { draft } = await admin.getBotDraft({ id: bot.botId });
      assert.equal(draft.saved, false);
    });

    test('viewers read a draft; editing, validating and deploying need the developer role', async () => {
      const viewer = await memberAdmin('viewer');
      const { draft } = await viewer.getBotDraft({ id: bot.botId });
      const refused = /answered 403/;
      await assert.rejects(viewer.saveBotDraft({ id: bot.botId, files: draft.files, layout: {} }), refused);
      await assert.rejects(viewer.validateBotDraft({ id: bot.botId, files: draft.files }), refused);
      await assert.rejects(viewer.deployBotDraft({ id: bot.botId }), refused);
      await assert.rejects(viewer.discardBotDraft({ id: bot.botId }), refused);
      const developer = await memberAdmin('developer');
      const saved = await developer.saveBotDraft({ id: bot.botId, files: draft.files, layout: {} });
      assert.equal(saved.draft.saved, true);
      assert.deepEqual(
        (await developer.deployBotDraft({ id: bot.botId, note: 'a developer' })).versionId.slice(0, 7),
        'botver_',
      );
    });

    test('paths out of the package folder are refused', async () => {
      await assert.rejects(
        parleyAdmin(t).saveBotDraft({ id: bot.botId, files: { '../bot.json': '{}' }, layout: {} }),
        /answered 400/,
      );
    });
  });
}
