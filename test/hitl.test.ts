// The built-in `hitl` integration through the Runtime API, as an SDK bot (and the official hitl plugin)
// calls it with its key: `hitl:createUser`, `hitl:startHitl`, `hitl:stopHitl`, the `hitl:hitlAssigned` and
// `hitl:hitlStopped` events, and the hitl conversation where agents and the bot meet. The bot's side is
// played by the official client with the bot's key, doing what the plugin does; the SDK bot itself is in
// test/e2e/sdk-bot-hitl.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type * as chat from '@botpress/chat';
import { deployPackage, json, replies, send, sendAndWait, startChat } from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from './helpers/deployed-bots.ts';
import { adminAs, failure, memberToken } from './helpers/handoffs.ts';
import type { Admin } from './helpers/handoffs.ts';
import { waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** A Parley bot that answers "ping" and nothing else: its workflows are not suppressed by a hitl handoff. */
const PING_BOT = {
  'bot.json': json({ formatVersion: 1, name: 'hitl-bot' }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'route' },
      {
        id: 'route',
        type: 'standard',
        cards: [
          { type: 'expression', condition: "event.preview !== 'ping'", to: 'quiet' },
          { type: 'say', message: { type: 'text', text: 'pong' } },
        ],
      },
      { id: 'quiet', type: 'standard', cards: [] },
    ],
  }),
};

/** What an action call through the official client answers, as a plain object. */
type Output = Record<string, unknown>;

for (const store of await testStores()) {
  describe(`the built-in hitl integration (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    let agent: Admin;
    let viewer: Admin;
    // Both chats start before any hitl conversation exists (startChat finds its conversation as the new one).
    let visitor: Chatter;
    let other: Chatter;

    const call = async (type: string, input: Output): Promise<Output> =>
      (await bot.client.callAction({ type, input })).output;
    const eventsOf = async (conversationId: string) =>
      (await bot.client.listEvents({ conversationId })).events;
    const textsOf = async (conversationId: string) =>
      (await bot.client.listMessages({ conversationId })).messages.map((m) => m.payload.text as string);

    before(async () => {
      t = await startTestServer(store);
      bot = await deployPackage(t, PING_BOT);
      agent = adminAs(t, (await memberToken(t, 'agent')).token, t.workspaceId);
      viewer = adminAs(t, (await memberToken(t, 'viewer')).token, t.workspaceId);
      visitor = await startChat(bot);
      other = await startChat(bot);
    });
    after(() => t?.close());

    test('startHitl opens a handoff of the visitor’s conversation; the agent and the bot meet in its hitl conversation; resolve sends hitlStopped', async () => {
      const heard: chat.Message[] = [];
      const listener = await visitor.chat.listenConversation({ id: visitor.conversationId });
      listener.on('message_created', (m) => heard.push(m));
      try {
        await send(visitor, 'I need a person');
        // The plugin's way: a user of the integration for the visitor, linked to them by tags.
        const { userId: endUserId } = await call('hitl:createUser', {
          name: 'Vera Visitor',
          email: 'vera@example.com',
        });
        assert.equal(typeof endUserId, 'string');
        const { user: endUser } = await bot.client.getUser({ id: String(endUserId) });
        assert.equal(endUser.name, 'Vera Visitor');
        assert.equal(endUser.tags.email, 'vera@example.com');
        await bot.client.updateUser({ id: endUser.id, tags: { upstream: visitor.runtimeUserId } });

        const start = {
          userId: endUser.id,
          title: 'Refund',
          description: 'order 42',
          hitlSession: { team: 'billing' },
          messageHistory: [{ source: { type: 'bot' }, type: 'text', payload: { text: 'Hello' } }],
        };
        const { conversationId: hitlId } = await call('hitl:startHitl', start);
        assert.equal(typeof hitlId, 'string');
        const hitlConversationId = String(hitlId);
        const { conversation } = await bot.client.getConversation({ id: hitlConversationId });
        assert.equal(conversation.channel, 'hitl');
        assert.equal(conversation.integration, 'hitl');
        // A second call (a retried one) finds the open handoff and its hitl conversation.
        assert.equal((await call('hitl:startHitl', start)).conversationId, hitlConversationId);

        const { handoffs } = await agent.listHandoffs({ id: bot.botId, status: 'pending' });
        const pending = handoffs.find((h) => h.conversationId === visitor.runtimeConversationId);
        assert.ok(pending, JSON.stringify(handoffs));
        assert.equal(handoffs.filter((h) => h.conversationId === visitor.runtimeConversationId).length, 1);
        assert.equal(pending.source, 'hitl');
        assert.equal(pending.hitlConversationId, hitlConversationId);
        assert.equal(pending.userId, visitor.runtimeUserId);
        assert.equal(pending.reason, 'Refund: order 42');
        assert.equal(pending.team, 'billing');

        // Unlike a card's handoff, a hitl one leaves the bot's workflows running: the bot routes by itself.
        assert.equal((await sendAndWait(bot, visitor, 'ping')).status, 'processed');
        assert.deepEqual(await replies(bot, visitor), ['pong']);

        // A viewer reads it but may neither take nor answer it.
        assert.equal(
          (await failure(viewer.assignHandoff({ id: bot.botId, handoffId: pending.id }))).status,
          403,
        );

        // The agent takes it: the bot gets hitl:hitlAssigned in the hitl conversation, naming the agent's user.
        const { handoff: taken } = await agent.assignHandoff({ id: bot.botId, handoffId: pending.id });
        assert.ok(taken.agent);
        const agentUserId = taken.agent.userId;
        const assigned = await waitFor('hitl:hitlAssigned', async () =>
          (await eventsOf(hitlConversationId)).find((e) => e.type === 'hitl:hitlAssigned'),
        );
        assert.deepEqual(assigned.payload, { conversationId: hitlConversationId, userId: agentUserId });

        // The agent answers: the message reaches the bot in the hitl conversation, from the agent's user,
        // as an incoming message; it is not posted to the visitor (the bot forwards it).
        const { message: answer } = await agent.createHandoffMessage({
          id: bot.botId,
          handoffId: pending.id,
          payload: { type: 'text', text: 'Hi, Ada here' },
        });
        assert.equal(answer.conversationId, hitlConversationId);
        assert.equal(answer.userId, agentUserId);
        assert.equal(answer.direction, 'incoming');
        await waitFor('the agent’s message as the bot’s event', async () =>
          (await eventsOf(hitlConversationId)).find(
            (e) => e.type === 'message_created' && e.messageId === answer.id,
          ),
        );
        assert.ok(!(await textsOf(visitor.runtimeConversationId)).includes('Hi, Ada here'));

        // The bot forwards it as the plugin does, naming the agent's user in the payload: the visitor
        // hears it once, from the agent's user.
        await bot.client.createMessage({
          conversationId: visitor.runtimeConversationId,
          userId: bot.botId,
          type: 'text',
          payload: { text: 'Hi, Ada here', userId: agentUserId },
          tags: {},
        });
        const forwarded = await waitFor('the forwarded message', async () =>
          heard.find((m) => m.payload.type === 'text' && m.payload.text === 'Hi, Ada here'),
        );
        assert.equal(forwarded.userId, agentUserId);
        // Naming any other user leaves the message the bot's.
        await bot.client.createMessage({
          conversationId: visitor.runtimeConversationId,
          userId: bot.botId,
          type: 'text',
          payload: { text: 'An agent joined', userId: endUser.id },
          tags: {},
        });
        const notice = await waitFor('the bot’s notice', async () =>
          heard.find((m) => m.payload.type === 'text' && m.payload.text === 'An agent joined'),
        );
        assert.notEqual(notice.userId, agentUserId);
        assert.notEqual(notice.userId, endUser.id);

        // The visitor answers; the bot copies it to the hitl conversation as the end user's, as the plugin does.
        await send(visitor, 'It is order 42');
        await bot.client.createMessage({
          conversationId: hitlConversationId,
          userId: bot.botId,
          type: 'text',
          payload: { text: 'It is order 42', userId: endUser.id },
          tags: {},
        });
        // The agent reads the conversation before the handoff, then the hitl conversation: each message once.
        const detail = await agent.getHandoff({ id: bot.botId, handoffId: pending.id });
        assert.deepEqual(
          detail.messages.map((m) => [m.payload.text, m.direction, m.userId]),
          [
            ['I need a person', 'incoming', visitor.runtimeUserId],
            ['Hi, Ada here', 'outgoing', agentUserId],
            ['It is order 42', 'incoming', visitor.runtimeUserId],
          ],
        );

        // The agent resolves it: the bot gets hitl:hitlStopped, and stopping it again changes nothing.
        assert.equal(
          (await agent.resolveHandoff({ id: bot.botId, handoffId: pending.id })).handoff.status,
          'resolved',
        );
        const stopped = await waitFor('hitl:hitlStopped', async () =>
          (await eventsOf(hitlConversationId)).find((e) => e.type === 'hitl:hitlStopped'),
        );
        assert.deepEqual(stopped.payload, { conversationId: hitlConversationId });
        assert.deepEqual(await call('hitl:stopHitl', { conversationId: hitlConversationId }), {});
        const { events } = await agent.getHandoff({ id: bot.botId, handoffId: pending.id });
        assert.deepEqual(
          events.map((e) => e.action),
          ['started', 'assigned', 'message', 'resolved'],
        );
      } finally {
        await listener.disconnect();
      }
    });

    test('stopHitl resolves it as the bot, without hitlStopped; the visitor’s own user may be named', async () => {
      await send(other, 'help me');
      const { conversationId } = await call('hitl:startHitl', { userId: other.runtimeUserId });
      const hitlConversationId = String(conversationId);
      const { handoffs } = await agent.listHandoffs({ id: bot.botId, status: 'pending' });
      const pending = handoffs.find((h) => h.hitlConversationId === hitlConversationId);
      assert.ok(pending);
      assert.equal(pending.conversationId, other.runtimeConversationId);
      assert.equal(pending.reason, 'The bot asked for a person');
      // The visitor does not join the agents' side.
      const { participants } = await other.chat.listParticipants({ conversationId: other.conversationId });
      assert.equal(participants.length, 1);
      const { users } = await bot.client.listUsers({ conversationId: hitlConversationId });
      assert.deepEqual(users, []);

      assert.deepEqual(await call('hitl:stopHitl', { conversationId: hitlConversationId }), {});
      const detail = await agent.getHandoff({ id: bot.botId, handoffId: pending.id });
      assert.equal(detail.handoff.status, 'resolved');
      assert.deepEqual(
        detail.events.map((e) => [e.action, e.accountId]),
        [
          ['started', undefined],
          ['resolved', undefined],
        ],
      );
      const types = (await eventsOf(hitlConversationId)).map((e) => e.type);
      assert.ok(!types.includes('hitl:hitlStopped'), JSON.stringify(types));
      const { events } = await bot.client.listEvents({ conversationId: other.runtimeConversationId });
      assert.ok(events.some((e) => e.type === 'handoff.resolved'));
    });

    test('what the integration refuses', async () => {
      const refused = async (type: string, input: Output) => {
        try {
          await call(type, input);
        } catch (err) {
          return (err as { code?: number }).code;
        }
        assert.fail(`${type} succeeded`);
      };
      // A user who never wrote to the bot has no conversation to hand over.
      const { user } = await bot.client.createUser({ tags: {} });
      assert.equal(await refused('hitl:startHitl', { userId: user.id }), 400);
      assert.equal(await refused('hitl:startHitl', {}), 400);
      assert.equal(await refused('hitl:stopHitl', { conversationId: visitor.runtimeConversationId }), 400);
      assert.equal(await refused('hitl:createUser', { email: 'x@example.com' }), 400);
      assert.equal(await refused('hitl:noSuchAction', {}), 404);
    });
  });
}
