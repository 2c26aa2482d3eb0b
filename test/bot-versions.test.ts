// Bot versions through the official client: every deploy (`parley deploy` of a package, a bundle deployed
// as `bp deploy` does, createBotVersion) keeps one, listed newest first; deployBotVersion (and `parley
// versions deploy`) rolls a bot back and forward in one step while a conversation goes on, its next
// message answered by the version deployed then, its dialog where it stood or, where the version lacks
// its node, started over.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ForbiddenError, InvalidPayloadError, ResourceNotFoundError } from '@botpress/client';
import type { Client } from '@botpress/client';
import { deployWithCli } from './helpers/chat-bots.ts';
import { json, logsSince, replies, sendAndWait, startChat, waitForReplies } from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot, Files } from './helpers/deployed-bots.ts';
import { parleyAdmin, parleyClient } from './helpers/parley-client.ts';
import { APIS } from '../src/contract/apis.ts';
import { HEADERS } from '../src/contract/headers.ts';
import { runParley } from './helpers/process.ts';
import { rejectsWith } from './helpers/runtime.ts';
import { sandboxSkip } from './helpers/sandbox.ts';
import { chatBundle } from './helpers/sdk-bundles.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const say = (text: string) => ({ type: 'say', message: { type: 'text', text } });

/**
 * A package whose every reply names its version: `ask` asks a name (a capture card in the node `askAt`)
 * and greets with it; anything else is echoed. It declares a table, whose schema its versions keep.
 */
function versionedBot(version: string, askAt = 'ask'): Files {
  return {
    'bot.json': json({ formatVersion: 1, name: 'versioned-bot' }),
    'tables/notes.json': json({
      name: 'NotesTable',
      schema: { type: 'object', properties: { text: { type: 'string' } } },
    }),
    'workflows/main.json': json({
      nodes: [
        {
          id: 'start',
          type: 'start',
          next: [{ when: "event.payload.text === 'ask'", to: askAt }, { to: 'echo' }],
        },
        { id: 'echo', type: 'standard', cards: [say(`${version}: {{ event.payload.text }}`)] },
        {
          id: askAt,
          type: 'standard',
          cards: [
            { type: 'capture', variable: 'conversation.name', kind: 'text', prompt: 'Your name?' },
            say(`${version} hi {{ conversation.name }}`),
          ],
        },
      ],
    }),
  };
}

/** A data: URL's JSON document (what getBotVersion's `url` points at). */
function documentAt(url: string): Record<string, unknown> {
  const [head, data] = url.split(',', 2);
  assert.equal(head, 'data:application/json;base64');
  return JSON.parse(Buffer.from(data ?? '', 'base64').toString('utf8')) as Record<string, unknown>;
}

/** Why SDK bundles cannot run here, if they cannot. */
const skip = await sandboxSkip();

for (const store of await testStores()) {
  describe(`bot versions (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let dir: string;
    before(async () => {
      t = await startTestServer(store);
      dir = await mkdtemp(path.join(os.tmpdir(), 'parley-versions-'));
    });
    after(async () => {
      await t.close();
      await rm(dir, { recursive: true, force: true });
    });

    /**
     * The bot's versions with Parley's fields (number, runtime, deployed...), through the contract's
     * client; the official client's answer, checked to hold the same ids, names and notes in the same order.
     */
    async function versionsOf(botId: string) {
      const { versions } = await parleyAdmin(t).listBotVersions({ id: botId });
      const official = (await t.client().listBotVersions({ id: botId })).versions;
      assert.deepEqual(
        official.map((v) => [v.id, v.name, v.description]),
        versions.map((v) => [v.id, v.name, v.description]),
      );
      return versions;
    }

    const env = () => ({ PARLEY_URL: t.url, PARLEY_TOKEN: t.token, PARLEY_WORKSPACE_ID: t.workspaceId });

    /** `parley versions …` of the package folder's bot: its exit code and output. */
    async function versionsCli(args: string[]): Promise<{ code: number | null; output: string }> {
      const proc = runParley(['versions', ...args], env());
      const code = await proc.exited;
      return { code, output: proc.output() };
    }

    /** A personal access token of a new member of the workspace with `role`. */
    async function memberToken(role: 'viewer' | 'developer'): Promise<string> {
      const email = `${role}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
      await t.client().createWorkspaceMember({ email, role });
      const account = await t.server.domain.accounts.findByEmail(email);
      assert.ok(account);
      return (await t.server.domain.accounts.createToken(account.id, role)).value;
    }

    /** A member of the workspace with `role`, as an official client. */
    async function memberClient(role: 'viewer' | 'developer'): Promise<Client> {
      return t.client({ token: await memberToken(role) });
    }

    /** The Admin API through the contract's client, with this token in this workspace. */
    const adminAs = (token: string, workspaceId = t.workspaceId) =>
      parleyClient(t.url, APIS.admin, {
        [HEADERS.authorization]: `Bearer ${token}`,
        [HEADERS.workspaceId]: workspaceId,
      });

    describe('a package deployed with parley deploy', () => {
      let bot: DeployedBot;
      let c: Chatter;
      /** The versions' ids, by the number of the deploy that made them. */
      const made: string[] = [];

      /** Writes `files` over the folder's (its deploy link stays) and deploys it with `parley deploy --note`. */
      async function deploy(files: Files, note: string): Promise<void> {
        for (const [file, text] of Object.entries(files)) {
          await mkdir(path.dirname(path.join(dir, 'bot', file)), { recursive: true });
          await writeFile(path.join(dir, 'bot', file), text);
        }
        const { botId, webhookUrl } = await deployWithCli(t, path.join(dir, 'bot'), ['--note', note]);
        if (!bot) {
          const { value } = await t.client().createBotApiKey({ botId });
          bot = {
            botId,
            key: value,
            client: t.client({ token: value, botId, workspaceId: undefined }),
            webhookUrl,
          };
        }
        assert.equal(botId, bot.botId, 'the folder deploys to its bot');
      }

      /** Sends `text` and answers the bot's replies to it. */
      async function answerTo(text: string): Promise<string[]> {
        const before = (await replies(bot, c)).length;
        const event = await sendAndWait(bot, c, text);
        assert.equal(event.status, 'processed', `the turn of "${text}" ended ${event.status}`);
        return (await replies(bot, c)).slice(before);
      }

      before(async () => {
        await deploy(versionedBot('v1'), 'the first');
        c = await startChat(bot);
      });

      test('the first deploy keeps a version: the package, its definition and its tables’ schemas, who and when', async () => {
        const admin = t.client();
        const versions = await versionsOf(bot.botId);
        assert.equal(versions.length, 1);
        const [first] = versions;
        assert.ok(first);
        made.push(first.id);
        assert.match(first.id, /^botver_/);
        assert.equal(first.name, 'v1');
        assert.equal(first.description, 'the first');
        assert.deepEqual(
          { number: first.number, runtime: first.runtime, deployed: first.deployed },
          { number: 1, runtime: 'parley', deployed: true },
        );
        const { id: accountId } = (await admin.getAccount({})).account;
        assert.equal(first.createdBy, accountId);
        assert.equal((await parleyAdmin(t).getBot({ id: bot.botId })).bot.versionId, first.id);

        const { url } = await admin.getBotVersion({ id: bot.botId, versionId: first.id });
        const { version } = await parleyAdmin(t).getBotVersion({ id: bot.botId, versionId: first.id });
        assert.deepEqual(version, first);
        const kept = documentAt(url);
        assert.equal(kept.id, first.id);
        assert.equal(typeof kept.code, 'string');
        assert.equal(
          (JSON.parse(String(kept.code)) as { manifest: { name: string } }).manifest.name,
          'versioned-bot',
        );
        // The table's schema as the Tables API answers it (getTable).
        const { table } = await bot.client.getTable({ table: 'NotesTable' });
        assert.deepEqual(kept.tables, { NotesTable: { schema: table.schema, keyColumn: null } });
        assert.deepEqual(await answerTo('hello'), ['v1: hello']);
      });

      test('a dialog waiting across a deploy goes on in the new version, where it stood', async () => {
        assert.deepEqual(await answerTo('ask'), ['Your name?']);
        await deploy(versionedBot('v2'), 'greets as v2');
        const versions = await versionsOf(bot.botId);
        assert.deepEqual(
          versions.map((v) => [v.number, v.name, v.description, v.deployed]),
          [
            [2, 'v2', 'greets as v2', true],
            [1, 'v1', 'the first', false],
          ],
        );
        made.push(versions[0]?.id ?? '');
        assert.deepEqual(await answerTo('Ada'), ['v2 hi Ada']);
      });

      test('parley versions list and deploy: a rollback, and the conversation’s next message answered by it', async () => {
        const listed = await versionsCli(['list', path.join(dir, 'bot')]);
        assert.equal(listed.code, 0, listed.output);
        const lines = listed.output.trim().split('\n');
        assert.match(lines[0] ?? '', new RegExp(`^\\* 2  ${made[1]}  v2  \\S+ by \\S+  greets as v2$`));
        assert.match(lines[1] ?? '', new RegExp(`^  1  ${made[0]}  v1  `));

        const rolled = await versionsCli(['deploy', made[0] ?? '', path.join(dir, 'bot')]);
        assert.equal(rolled.code, 0, rolled.output);
        assert.match(rolled.output, new RegExp(`^Deployed version 1 \\(v1\\) of bot ${bot.botId}$`, 'm'));
        assert.equal((await parleyAdmin(t).getBot({ id: bot.botId })).bot.versionId, made[0]);
        assert.deepEqual(await answerTo('again'), ['v1: again']);
        assert.deepEqual(await answerTo('ask'), ['Your name?']);
      });

      test('deployBotVersion forward again: the dialog waiting on v1 is answered by v2; no version is added', async () => {
        await t.client().deployBotVersion({ id: bot.botId, versionId: made[1] ?? '' });
        assert.deepEqual(await answerTo('Bob'), ['v2 hi Bob']);
        const versions = await versionsOf(bot.botId);
        assert.deepEqual(
          versions.map((v) => [v.number, v.deployed]),
          [
            [2, true],
            [1, false],
          ],
        );
      });

      test('a dialog whose node the deployed version lacks starts over, and says so in the bot’s logs', async () => {
        const since = new Date().toISOString();
        assert.deepEqual(await answerTo('ask'), ['Your name?']);
        await deploy(versionedBot('v3', 'ask-again'), 'the ask node renamed');
        assert.deepEqual(await answerTo('Cy'), ['v3: Cy']);
        const lines = await logsSince(t, bot.botId, since);
        assert.ok(
          lines.some((l) => l.level === 'warn' && /no node "ask" in workflow "main"/.test(l.message)),
          JSON.stringify(lines.map((l) => l.message)),
        );
        // Back to v2, whose node is `ask`: the dialog of v3's node starts over in turn.
        assert.deepEqual(await answerTo('ask'), ['Your name?']);
        await t.client().deployBotVersion({ id: bot.botId, versionId: made[1] ?? '' });
        assert.deepEqual(await answerTo('Dee'), ['v2: Dee']);
      });

      test('getBotPackage: the package the bot runs and a version’s, without their code, to viewers too', async () => {
        const v3 = (await versionsOf(bot.botId)).find((v) => v.number === 3);
        assert.ok(v3);
        const viewer = adminAs(await memberToken('viewer'));
        const now = await viewer.getBotPackage({ id: bot.botId });
        assert.equal(now.runtime, 'parley');
        assert.equal(now.versionId, made[1], 'the bot runs v2 again');
        assert.ok(now.package);
        assert.deepEqual(Object.keys(now.package).sort(), ['actions', 'manifest', 'tables', 'workflows']);
        assert.equal(now.package.manifest.name, 'versioned-bot');
        assert.equal(now.package.tables?.notes?.name, 'NotesTable');
        const main = now.package.workflows.main;
        assert.ok(main);
        assert.deepEqual(
          main.nodes.map((n) => n.id),
          ['start', 'echo', 'ask'],
        );
        assert.deepEqual(main.nodes[0]?.next, [
          { when: "event.payload.text === 'ask'", to: 'ask' },
          { to: 'echo' },
        ]);
        assert.deepEqual(main.nodes[1]?.cards, [say('v2: {{ event.payload.text }}')]);

        const kept = await viewer.getBotPackage({ id: bot.botId, versionId: v3.id });
        assert.equal(kept.versionId, v3.id);
        assert.deepEqual(
          kept.package?.workflows.main?.nodes.map((n) => n.id),
          ['start', 'echo', 'ask-again'],
        );
        await assert.rejects(
          viewer.getBotPackage({ id: bot.botId, versionId: 'botver_unknown' }),
          /answered 404/,
        );
        // Another workspace's members do not see the bot.
        const elsewhere = await t.client().createWorkspace({ name: 'Elsewhere' });
        await assert.rejects(adminAs(t.token, elsewhere.id).getBotPackage({ id: bot.botId }), /answered 404/);
      });

      test('createBotVersion keeps what the bot runs under a name; it is the deployed one', async () => {
        const { version } = await t.client().createBotVersion({
          id: bot.botId,
          name: 'known good',
          description: 'before the demo',
        });
        assert.deepEqual(
          { name: version.name, description: version.description },
          { name: 'known good', description: 'before the demo' },
        );
        const versions = await versionsOf(bot.botId);
        assert.deepEqual({ id: versions[0]?.id, number: versions[0]?.number }, { id: version.id, number: 4 });
        assert.deepEqual(
          versions.map((v) => v.deployed),
          [true, false, false, false],
        );
        assert.deepEqual(await answerTo('still'), ['v2: still']);
      });

      test('versions made at once each get a number of their own', async () => {
        const made = await Promise.all(
          ['at once 1', 'at once 2', 'at once 3'].map((name) =>
            parleyAdmin(t).createBotVersion({ id: bot.botId, name }),
          ),
        );
        assert.deepEqual(made.map((m) => m.version.number).sort(), [5, 6, 7]);
        // One of them is deployed: the one whose transaction committed last.
        const deployed = (await versionsOf(bot.botId)).filter((v) => v.deployed).map((v) => v.id);
        assert.equal(deployed.length, 1);
        assert.ok(made.some((m) => m.version.id === deployed[0]));
      });

      test('viewers list and read versions; creating and deploying them need the developer role', async () => {
        const viewer = await memberClient('viewer');
        const { versions } = await viewer.listBotVersions({ id: bot.botId });
        assert.equal(versions.length, 7);
        await viewer.getBotVersion({ id: bot.botId, versionId: made[0] ?? '' });
        await rejectsWith(viewer.createBotVersion({ id: bot.botId, name: 'nope' }), ForbiddenError);
        await rejectsWith(
          viewer.deployBotVersion({ id: bot.botId, versionId: made[0] ?? '' }),
          ForbiddenError,
        );
        const developer = await memberClient('developer');
        await developer.deployBotVersion({ id: bot.botId, versionId: made[0] ?? '' });
        assert.deepEqual(await answerTo('dev'), ['v1: dev']);
      });

      test('a version of another bot, or an unknown one, is not found', async () => {
        const { bot: other } = await t.client().createBot({ name: 'other' });
        await rejectsWith(
          t.client().deployBotVersion({ id: other.id, versionId: made[0] ?? '' }),
          ResourceNotFoundError,
        );
        await rejectsWith(t.client().createBotVersion({ id: other.id, name: 'empty' }), InvalidPayloadError);
        assert.deepEqual((await t.client().listBotVersions({ id: other.id })).versions, []);
        assert.deepEqual(await parleyAdmin(t).getBotPackage({ id: other.id }), { runtime: null });
        await assert.rejects(
          parleyAdmin(t).getBotPackage({ id: other.id, versionId: made[0] ?? '' }),
          /answered 404/,
        );
      });
    });

    describe('a bundle deployed as bp deploy does (createBot and updateBot with code)', () => {
      test(
        'each deploy keeps a version; a rollback answers the conversation’s next message',
        { skip },
        async () => {
          const admin = t.client();
          const { bot: created } = await admin.createBot({
            name: 'sdk-versioned',
            code: chatBundle("await reply('b1 ' + text);"),
          });
          // Parley's own field, the version's note, through the contract's client.
          await parleyAdmin(t).updateBot({
            id: created.id,
            code: chatBundle("await reply('b2 ' + text);"),
            versionDescription: 'b2',
          });
          const versions = await versionsOf(created.id);
          assert.deepEqual(await parleyAdmin(t).getBotPackage({ id: created.id }), {
            runtime: 'botpress-sdk',
            versionId: versions[0]?.id,
          });
          assert.deepEqual(
            versions.map((v) => [v.number, v.runtime, v.description, v.deployed]),
            [
              [2, 'botpress-sdk', 'b2', true],
              [1, 'botpress-sdk', undefined, false],
            ],
          );
          const { value } = await admin.createBotApiKey({ botId: created.id });
          const { bot } = await admin.getBot({ id: created.id });
          const deployed: DeployedBot = {
            botId: created.id,
            key: value,
            client: t.client({ token: value, botId: created.id, workspaceId: undefined }),
            webhookUrl: bot.integrations.chat?.webhookUrl ?? assert.fail('a chat channel'),
          };
          const c = await startChat(deployed);
          await sendAndWait(deployed, c, 'one');
          assert.deepEqual(await waitForReplies(deployed, c, 1), ['b2 one']);
          await admin.deployBotVersion({ id: created.id, versionId: versions[1]?.id ?? '' });
          await sendAndWait(deployed, c, 'two');
          assert.deepEqual(await waitForReplies(deployed, c, 2), ['b2 one', 'b1 two']);
        },
      );
    });
  });
}
