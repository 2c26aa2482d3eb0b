// Testing a bot's draft without deploying it, through the contract's client and the official chat client
// on both stores: the draft answers in its test conversation while the bot's own conversations keep the
// deployed code; each test turn tells the nodes, cards and transitions it ran, the variables after it and
// its model calls (or where and why it failed); the draft's twin is never listed nor counted and goes
// with its bot; viewers may not test, nor may another workspace.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { json } from './helpers/deployed-bots.ts';
import type { Files } from './helpers/deployed-bots.ts';
import { memberToken } from './helpers/handoffs.ts';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { parleyAdmin, parleyClient } from './helpers/parley-client.ts';
import { waitFor } from './helpers/runtime.ts';
import { APIS } from '../src/contract/apis.ts';
import { HEADERS } from '../src/contract/headers.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const say = (text: string) => ({ type: 'say', message: { type: 'text', text } });

const manifest = json({
  formatVersion: 1,
  name: 'tested-bot',
  variables: { conversation: { turns: { type: 'number', default: 0 } } },
});
const DEPLOYED: Files = {
  'bot.json': manifest,
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'echo' },
      { id: 'echo', type: 'standard', cards: [say('deployed: {{ event.payload.text }}')] },
    ],
  }),
};
const DRAFT: Files = {
  'bot.json': manifest,
  'code/shout.ts':
    'conversation.turns = Number(conversation.turns) + 1;\nworkflow.loud = String(event.payload.text).toUpperCase();\n',
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'shout' },
      {
        id: 'shout',
        type: 'standard',
        cards: [{ type: 'code', file: 'code/shout.ts' }, say('draft: {{ workflow.loud }}')],
      },
    ],
  }),
};

for (const store of await testStores()) {
  describe(`testing a bot's draft (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let models: ModelServer;
    let botId: string;
    before(async () => {
      models = await startModelServer();
      t = await startTestServer(store, parleySettings(models));
      botId = (await t.client().createBot({ name: 'tested-bot' })).bot.id;
      const admin = parleyAdmin(t);
      await admin.saveBotDraft({ id: botId, files: DEPLOYED, layout: {} });
      await admin.deployBotDraft({ id: botId, note: 'deployed' });
    });
    after(async () => {
      await t.close();
      await models.close();
    });

    /** A conversation of a new user of the Chat API channel `webhookId`. */
    const converse = async (webhookId: string) => {
      const client = await chat.Client.connect({ apiUrl: `${t.url}/chat/${webhookId}` });
      const { conversation } = await client.createConversation({});
      /** Sends `text`; answers the message's id once the bot answered it with `replies` messages in all. */
      const send = async (text: string) => {
        const { message } = await client.createMessage({
          conversationId: conversation.id,
          payload: { type: 'text', text },
        });
        return message.id;
      };
      const texts = async () => {
        const { messages } = await client.listMessages({ conversationId: conversation.id });
        return messages
          .filter((m) => m.userId !== client.user.id)
          .map((m) => (m.payload.type === 'text' ? m.payload.text : m.payload.type))
          .reverse();
      };
      const repliesUntil = (n: number) =>
        waitFor(`${n} replies`, async () => {
          const all = await texts();
          return all.length >= n && all;
        });
      return { send, repliesUntil };
    };

    const chatWebhookOf = async (id: string) =>
      (await t.client().getBot({ id })).bot.integrations.chat?.webhookId ?? '';

    test('the draft answers in its test conversation; the bot goes on answering with its deployed code', async () => {
      const admin = parleyAdmin(t);
      // The files as the editor holds them, not saved.
      const { webhookId } = await admin.startBotDraftTest({ id: botId, files: DRAFT });
      assert.notEqual(webhookId, await chatWebhookOf(botId));
      const test = await converse(webhookId);
      const first = await test.send('hello');
      assert.deepEqual(await test.repliesUntil(1), ['draft: HELLO']);
      const second = await test.send('again');
      assert.deepEqual(await test.repliesUntil(2), ['draft: HELLO', 'draft: AGAIN']);

      // A turn is recorded as it ends, a moment after its reply is sent.
      const turns = await waitFor('both turns', async () => {
        const answer = await admin.listBotDraftTestTurns({ id: botId, messageId: second });
        return answer.turns.length === 2 && answer.turns;
      });
      assert.deepEqual(
        turns.map((turn) => turn.messageId),
        [first, second],
      );
      const last = turns[1];
      assert.ok(last);
      assert.deepEqual(last.steps, [
        { workflow: 'main', node: 'start', next: 'shout' },
        { workflow: 'main', node: 'shout', card: 0, cardType: 'code' },
        { workflow: 'main', node: 'shout', card: 1, cardType: 'say' },
        { workflow: 'main', node: 'shout' },
      ]);
      assert.equal(last.variables.conversation.turns, 2);
      assert.equal(last.variables.workflow.loud, 'AGAIN');
      assert.equal(last.variables.workflowName, 'main');
      assert.equal(last.replyIds.length, 1);

      // The bot's own conversation, meanwhile: its deployed code, and no trace of the draft.
      const own = await converse(await chatWebhookOf(botId));
      const mine = await own.send('hello');
      assert.deepEqual(await own.repliesUntil(1), ['deployed: hello']);
      await assert.rejects(admin.listBotDraftTestTurns({ id: botId, messageId: mine }), /answered 404/);
    });

    test('a draft with problems is not run; the saved draft is tested when no files are sent', async () => {
      const admin = parleyAdmin(t);
      const broken = {
        ...DRAFT,
        'workflows/main.json': json({ nodes: [{ id: 'start', type: 'start', next: 'x' }] }),
      };
      await assert.rejects(
        admin.startBotDraftTest({ id: botId, files: broken }),
        /answered 400: .*The draft has 1 problem: it cannot be tested.*"problems"/,
      );
      await admin.saveBotDraft({ id: botId, files: DRAFT, layout: {} });
      const { webhookId } = await admin.startBotDraftTest({ id: botId });
      const test = await converse(webhookId);
      await test.send('saved');
      assert.deepEqual(await test.repliesUntil(1), ['draft: SAVED']);
      // The bot runs the version it ran: testing deployed nothing to it.
      const { versions } = await admin.listBotVersions({ id: botId });
      assert.deepEqual(
        versions.map((v) => v.description),
        ['deployed'],
      );
    });

    test('an AI card’s model call shows in its turn, as a log line with the call', async () => {
      const files = {
        ...DRAFT,
        'workflows/main.json': json({
          nodes: [
            { id: 'start', type: 'start', next: 'write' },
            { id: 'write', type: 'standard', cards: [{ type: 'aiGenerate', instructions: 'Be brief.' }] },
          ],
        }),
      };
      const admin = parleyAdmin(t);
      const { webhookId } = await admin.startBotDraftTest({ id: botId, files });
      const test = await converse(webhookId);
      const message = await test.send('a model, please');
      assert.deepEqual(await test.repliesUntil(1), ['echo: a model, please']);
      const turn = await waitFor('the turn and its call', async () => {
        const { turns } = await admin.listBotDraftTestTurns({ id: botId, messageId: message });
        return turns.find((tn) => tn.logs.some((l) => l.call)) ?? false;
      });
      assert.deepEqual(turn.steps[1], { workflow: 'main', node: 'write', card: 0, cardType: 'aiGenerate' });
      const call = turn.logs.find((l) => l.call);
      assert.equal(call?.call?.kind, 'model');
      assert.match(call?.message ?? '', /^aiGenerate card in node "write": model call to /);
    });

    test('a turn that fails tells where and why', async () => {
      const files = { ...DRAFT, 'code/shout.ts': "throw new Error('the draft is not done');\n" };
      const admin = parleyAdmin(t);
      const { webhookId } = await admin.startBotDraftTest({ id: botId, files });
      const message = await (await converse(webhookId)).send('fail');
      const turn = await waitFor('the failed turn', async () => {
        const { turns } = await admin.listBotDraftTestTurns({ id: botId, messageId: message });
        return turns.find((tn) => tn.error !== undefined) ?? false;
      });
      assert.match(turn.error ?? '', /the draft is not done/);
      assert.deepEqual(turn.steps.at(-1), { workflow: 'main', node: 'shout', card: 0, cardType: 'code' });
    });

    test('the twin is never listed nor counted as a bot of the workspace', async () => {
      const { bots } = await t.client().listBots({});
      assert.deepEqual(
        bots.map((b) => b.id),
        [botId],
      );
      const { botCount } = await parleyAdmin(t).getWorkspace({ id: t.workspaceId });
      assert.equal(botCount, 1);
    });

    test('viewers may not test a draft nor read its turns', async () => {
      const viewer = parleyClient(t.url, APIS.admin, {
        [HEADERS.authorization]: `Bearer ${(await memberToken(t, 'viewer')).token}`,
        [HEADERS.workspaceId]: t.workspaceId,
      });
      const refused = /answered 403/;
      await assert.rejects(viewer.startBotDraftTest({ id: botId, files: DRAFT }), refused);
      const { webhookId } = await parleyAdmin(t).startBotDraftTest({ id: botId });
      const message = await (await converse(webhookId)).send('by a developer');
      await assert.rejects(viewer.listBotDraftTestTurns({ id: botId, messageId: message }), refused);
    });

    test('another workspace finds neither the bot’s draft test nor its turns', async () => {
      const { webhookId } = await parleyAdmin(t).startBotDraftTest({ id: botId });
      const message = await (await converse(webhookId)).send('mine');
      const other = await t.client().createWorkspace({ name: 'other' });
      const outsider = parleyClient(t.url, APIS.admin, {
        [HEADERS.authorization]: `Bearer ${t.token}`,
        [HEADERS.workspaceId]: other.id,
      });
      const missing = /answered 404/;
      await assert.rejects(outsider.startBotDraftTest({ id: botId }), missing);
      await assert.rejects(outsider.listBotDraftTestTurns({ id: botId, messageId: message }), missing);
    });

    test('a draft’s schedules do not fire while it is tested, only once it is deployed', async () => {
      const scheduled: Files = {
        ...DEPLOYED,
        'bot.json': json({
          formatVersion: 1,
          name: 'scheduled-bot',
          schedules: { nightly: { cron: '0 3 * * *' } },
        }),
      };
      const admin = parleyAdmin(t);
      const id = (await t.client().createBot({ name: 'scheduled-bot' })).bot.id;
      await admin.startBotDraftTest({ id, files: scheduled });
      await admin.saveBotDraft({ id, files: scheduled, layout: {} });
      await admin.deployBotDraft({ id, note: 'with a schedule' });
      const { db } = t.server.store;
      const twin = await db
        .selectFrom('bot_draft_twins')
        .select('twin_id')
        .where('bot_id', '=', id)
        .executeTakeFirstOrThrow();
      // The first look at a bot's schedule notes the time (the engine looks every 5 s): the bot's is
      // noted, and by then its twin's would have been too.
      const noted = (botId: string) =>
        db
          .selectFrom('settings')
          .select('key')
          .where('key', '=', `schedule:${botId}:nightly`)
          .executeTakeFirst();
      await waitFor('the deployed schedule noted', () => noted(id), 20_000);
      assert.equal(await noted(twin.twin_id), undefined);
    });

    test('the twin goes with its bot', async () => {
      const { webhookId } = await parleyAdmin(t).startBotDraftTest({ id: botId });
      await t.client().deleteBot({ id: botId });
      const answer = await fetch(`${t.url}/chat/${webhookId}/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(answer.status, 404);
    });
  });
}
