import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type * as chat from '@botpress/chat';
import { APIS } from '../src/contract/apis.ts';
import { HEADERS } from '../src/contract/headers.ts';
import {
  deployPackage,
  json,
  replies,
  send,
  sendAndWait,
  startChat,
  waitForLog,
  waitForReplies,
  waitForTurn,
} from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from './helpers/deployed-bots.ts';
import { adminAs, failure, memberToken } from './helpers/handoffs.ts';
import type { Admin } from './helpers/handoffs.ts';
import { parleyAdmin, parleyClient } from './helpers/parley-client.ts';
import { waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** A bot that hands over on "human" (no limit) and "human quick" (2 s for an agent to take it). */
const HANDOFF_BOT = {
  'bot.json': json({ formatVersion: 1, name: 'handoff-bot' }),
  'hooks/before_incoming_message/01-see.js': "console.log('hook saw: ' + event.preview);\n",
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'route' },
      {
        id: 'route',
        type: 'standard',
        cards: [
          { type: 'expression', condition: "event.preview === 'human'", to: 'handover' },
          { type: 'expression', condition: "event.preview === 'human quick'", to: 'quick' },
          { type: 'say', message: { type: 'text', text: 'bot answered' } },
        ],
      },
      {
        id: 'handover',
        type: 'standard',
        cards: [
          {
            type: 'handoff',
            reason: 'The visitor asked for a person',
            team: 'support',
            message: 'Connecting you to a person…',
            onResolved: 'back',
            onTimeout: 'nobody',
          },
        ],
      },
      {
        id: 'quick',
        type: 'standard',
        cards: [
          {
            type: 'handoff',
            reason: 'In a hurry',
            message: { type: 'text', text: 'Waiting briefly for a person' },
            timeout: 2,
            onResolved: 'back',
            onTimeout: 'nobody',
          },
        ],
      },
      {
        id: 'back',
        type: 'standard',
        cards: [{ type: 'say', message: { type: 'text', text: 'The bot is back' } }],
      },
      {
        id: 'nobody',
        type: 'standard',
        cards: [{ type: 'say', message: { type: 'text', text: 'Nobody was free' } }],
      },
    ],
  }),
};

for (const store of await testStores()) {
  describe(`human handoff (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    let agent: Admin;
    let agentEmail: string;
    let viewer: Admin;
    let outsider: Admin;

    before(async () => {
      t = await startTestServer(store);
      bot = await deployPackage(t, HANDOFF_BOT);
      const a = await memberToken(t, 'agent');
      agentEmail = a.email;
      agent = adminAs(t, a.token, t.workspaceId);
      viewer = adminAs(t, (await memberToken(t, 'viewer')).token, t.workspaceId);
      // Someone with a workspace of their own, where the bot is not.
      const other = await t.server.domain.accounts.getOrCreateByEmail(`other-${Date.now()}@example.com`);
      const otherToken = (await t.server.domain.accounts.createToken(other.id, 'other')).value;
      const workspace = await parleyClient(t.url, APIS.admin, {
        [HEADERS.authorization]: `Bearer ${otherToken}`,
      }).createWorkspace({ name: 'elsewhere' });
      outsider = adminAs(t, otherToken, workspace.id);
    });
    after(() => t?.close());

    /** The open handoff of the chat's conversation, once the bot opened it. */
    const pendingOf = (c: Chatter) =>
      waitFor('the handoff in the queue', async () => {
        const { handoffs } = await agent.listHandoffs({ id: bot.botId, status: 'pending' });
        return handoffs.find((h) => h.conversationId === c.runtimeConversationId);
      });

    test('the card hands over; an agent takes and answers it; the visitor hears the agent; the bot resumes on resolve', async () => {
      const c = await startChat(bot);
      const listener = await c.chat.listenConversation({ id: c.conversationId });
      const heard: chat.Message[] = [];
      listener.on('message_created', (m) => heard.push(m));
      try {
        assert.equal((await sendAndWait(bot, c, 'human')).status, 'processed');
        assert.deepEqual(await replies(bot, c), ['Connecting you to a person…']);

        const pending = await pendingOf(c);
        assert.equal(pending.reason, 'The visitor asked for a person');
        // The workspace's queue, every bot's in one call (the console's inbox), is the workspace's only.
        const queue = (await agent.listWorkspaceHandoffs({ status: 'pending' })).handoffs;
        assert.ok(queue.some((h) => h.id === pending.id && h.botId === bot.botId));
        assert.equal(
          (await agent.listWorkspaceHandoffs({ status: 'resolved' })).handoffs.some(
            (h) => h.id === pending.id,
          ),
          false,
        );
        assert.equal(
          (await outsider.listWorkspaceHandoffs({})).handoffs.some((h) => h.id === pending.id),
          false,
        );
        assert.equal(pending.team, 'support');
        assert.equal(pending.source, 'card');
        assert.equal(pending.userId, c.runtimeUserId);
        assert.equal(pending.onResolved, 'back');
        assert.equal(pending.timeoutAt, undefined);

        // While it is open the visitor's messages are the agent's: the hook sees them, the dialog does not run.
        const since = new Date(Date.now() - 1000).toISOString();
        const meanwhile = await send(c, 'is anyone there?');
        assert.equal((await waitForTurn(bot, c, { messageId: meanwhile })).status, 'ignored');
        await waitForLog(t, bot.botId, since, /hook saw: is anyone there\?/);
        assert.deepEqual(await replies(bot, c), ['Connecting you to a person…']);

        // A viewer reads it but may not answer; someone of another workspace does not see it.
        assert.equal(
          (await viewer.getHandoff({ id: bot.botId, handoffId: pending.id })).handoff.id,
          pending.id,
        );
        const refused = await failure(viewer.assignHandoff({ id: bot.botId, handoffId: pending.id }));
        assert.equal(refused.status, 403);
        assert.equal(refused.body.type, 'Forbidden');
        const hidden = await failure(outsider.getHandoff({ id: bot.botId, handoffId: pending.id }));
        assert.equal(hidden.status, 404);
        assert.equal((await failure(outsider.listHandoffs({ id: bot.botId }))).status, 404);

        // Answering before taking it is refused; then the agent takes it and answers.
        const early = await failure(
          agent.createHandoffMessage({
            id: bot.botId,
            handoffId: pending.id,
            payload: { type: 'text', text: 'x' },
          }),
        );
        assert.equal(early.status, 409);
        const { handoff: taken } = await agent.assignHandoff({ id: bot.botId, handoffId: pending.id });
        assert.equal(taken.status, 'assigned');
        assert.ok(taken.agent && taken.assignedAt);
        assert.equal(taken.agent.name, agentEmail);
        const { message } = await agent.createHandoffMessage({
          id: bot.botId,
          handoffId: pending.id,
          payload: {
            type: 'choice',
            text: 'Hi, I can help. Which order?',
            options: [{ label: 'The last', value: 'last' }],
          },
        });
        assert.equal(message.userId, taken.agent.userId);
        assert.equal(message.direction, 'outgoing');

        // The visitor hears it live through the official chat client, from the agent's user, by name.
        await waitFor('the agent’s message to reach the visitor', async () =>
          heard.find((m) => m.payload.type === 'choice'),
        );
        const got = heard.find((m) => m.payload.type === 'choice');
        assert.equal(got?.userId, taken.agent.userId);
        const { participants } = await c.chat.listParticipants({ conversationId: c.conversationId });
        assert.ok(
          participants.some((p) => p.id === taken.agent?.userId && p.name === agentEmail),
          JSON.stringify(participants),
        );
        // The agent's message ran no turn: the bot said nothing more.
        assert.deepEqual(await replies(bot, c), ['Connecting you to a person…']);

        const detail = await agent.getHandoff({ id: bot.botId, handoffId: pending.id });
        const texts = detail.messages.map((m) => m.payload.text);
        assert.deepEqual(texts, [
          'human',
          'Connecting you to a person…',
          'is anyone there?',
          'Hi, I can help. Which order?',
        ]);
        assert.deepEqual(
          detail.events.map((e) => e.action),
          ['started', 'assigned', 'message'],
        );

        // The agent passes it to a colleague, who may answer (the viewer may not be given it); the agent no more.
        const owner = await t.server.domain.accounts.findByEmail('owner@parley.local');
        assert.ok(owner);
        const viewerId = (await viewer.getWorkspaceMember({})).userId;
        const toViewer = await failure(
          agent.assignHandoff({ id: bot.botId, handoffId: pending.id, agentId: viewerId }),
        );
        assert.equal(toViewer.status, 400);
        const { handoff: moved } = await agent.assignHandoff({
          id: bot.botId,
          handoffId: pending.id,
          agentId: owner.id,
        });
        assert.equal(moved.agent?.accountId, owner.id);
        assert.notEqual(moved.agent?.userId, taken.agent.userId);
        const notYours = await failure(
          agent.createHandoffMessage({
            id: bot.botId,
            handoffId: pending.id,
            payload: { type: 'text', text: 'still me' },
          }),
        );
        assert.equal(notYours.status, 409);
        await parleyAdmin(t).createHandoffMessage({
          id: bot.botId,
          handoffId: pending.id,
          payload: { type: 'text', text: 'The owner here' },
        });
        await waitFor('the colleague’s message to reach the visitor', async () =>
          heard.find((m) => m.payload.type === 'text' && m.userId === moved.agent?.userId),
        );

        const { handoff: closed } = await agent.resolveHandoff({ id: bot.botId, handoffId: pending.id });
        assert.equal(closed.status, 'resolved');
        assert.ok(closed.resolvedAt);
        assert.deepEqual(await waitForReplies(bot, c, 2), ['Connecting you to a person…', 'The bot is back']);
        assert.equal(
          (await failure(agent.resolveHandoff({ id: bot.botId, handoffId: pending.id }))).status,
          409,
        );

        assert.deepEqual(
          (await viewer.getHandoff({ id: bot.botId, handoffId: pending.id })).events.map((e) => [
            e.action,
            e.accountId,
          ]),
          [
            ['started', undefined],
            ['assigned', taken.agent.accountId],
            ['message', taken.agent.accountId],
            ['transferred', taken.agent.accountId],
            ['message', owner.id],
            ['resolved', taken.agent.accountId],
          ],
        );

        // The bot has the conversation again.
        assert.equal((await sendAndWait(bot, c, 'thanks')).status, 'processed');
        assert.deepEqual((await replies(bot, c)).at(-1), 'bot answered');

        // Each step was an event of the bot in the conversation (what outgoing webhooks receive).
        const { events } = await bot.client.listEvents({ conversationId: c.runtimeConversationId });
        const types = events.map((e) => e.type).filter((type) => type.startsWith('handoff.'));
        // The transfer is an assignment too.
        assert.deepEqual(types.sort(), [
          'handoff.assigned',
          'handoff.assigned',
          'handoff.resolved',
          'handoff.started',
        ]);
      } finally {
        await listener.disconnect();
      }
    });

    test('an agent answers handoffs but changes no bot', async () => {
      const refused = await failure(agent.createBot({ name: 'by an agent' }));
      assert.equal(refused.status, 403);
      assert.equal(refused.body.type, 'Forbidden');
      assert.equal((await agent.getBot({ id: bot.botId })).bot.id, bot.botId);
    });

    test('a handoff no agent takes in time times out, across a restart, and the bot goes on where the card says', async () => {
      const c = await startChat(bot);
      assert.equal((await sendAndWait(bot, c, 'human quick')).status, 'processed');
      const pending = await pendingOf(c);
      assert.ok(pending.timeoutAt);
      // The deadline is in the store: a server that restarts meanwhile still times it out.
      await t.restart();
      assert.deepEqual(await waitForReplies(bot, c, 2, 20_000), [
        'Waiting briefly for a person',
        'Nobody was free',
      ]);
      const { handoff } = await agent.getHandoff({ id: bot.botId, handoffId: pending.id });
      assert.equal(handoff.status, 'timed_out');
      assert.ok(handoff.timedOutAt);
      assert.equal(
        (await failure(agent.assignHandoff({ id: bot.botId, handoffId: pending.id }))).status,
        409,
      );
      const { handoffs } = await viewer.listHandoffs({ id: bot.botId, status: 'timed_out' });
      assert.deepEqual(
        handoffs.map((h) => h.id),
        [pending.id],
      );
    });
  });
}
