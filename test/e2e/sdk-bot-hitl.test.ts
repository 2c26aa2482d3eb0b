// An SDK bot that hands its visitor to a person through the built-in `hitl` integration, doing what the
// official hitl plugin does (deployed with `bp deploy`, talked to with the official chat client): it
// calls `hitl:createUser` and `hitl:startHitl` on a trigger word, forwards the agent's messages from the
// hitl conversation to the visitor and copies the visitor's there, and answers `hitl:hitlAssigned` and
// `hitl:hitlStopped`. The agent works through the Admin API.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chatUrlOf, deployWithBp, initBotProject } from '../helpers/bp-cli.ts';
import { ChatSession, textOf } from '../helpers/chat-bots.ts';
import { logsSince } from '../helpers/deployed-bots.ts';
import { adminAs, failure, memberToken } from '../helpers/handoffs.ts';
import type { Admin } from '../helpers/handoffs.ts';
import { waitFor } from '../helpers/runtime.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';

/**
 * The plugin's behaviour in a few lines of SDK 0.10: the conversations and users linked by `upstream` /
 * `downstream` tags as the plugin links them; "human" hands over, "bye" stops it as the bot.
 */
const HITL_BOT = `import { Bot, z } from '@botpress/sdk'

const bot = new Bot({ integrations: {}, configuration: { schema: z.object({}) }, states: {}, events: {}, recurringEvents: {} })

type Client = Parameters<Parameters<typeof bot.message>[0]>[0]['client']

const say = (client: Client, botId: string, conversationId: string, text: string, userId?: string) =>
  client.createMessage({ conversationId, userId: botId, tags: {}, type: 'text', payload: userId ? { text, userId } : { text } })

bot.message(async ({ message, client, ctx }) => {
  const text = String((message.payload as { text?: string }).text ?? '')
  const { conversation } = await client.getConversation({ id: message.conversationId })
  const tags = conversation.tags as Record<string, string | undefined>
  if (conversation.integration === 'hitl') {
    // An agent's message in the ticket: to the visitor, naming the agent's user.
    if (tags.upstream) await say(client, ctx.botId, tags.upstream, text, message.userId)
    return
  }
  if (tags.downstream) {
    if (text === 'bye') {
      await client.callAction({ type: 'hitl:stopHitl', input: { conversationId: tags.downstream } })
      await client.updateConversation({ id: message.conversationId, tags: { downstream: '' } })
      await say(client, ctx.botId, message.conversationId, 'You left the agent: back to the bot')
      return
    }
    const { user } = await client.getUser({ id: message.userId })
    await say(client, ctx.botId, tags.downstream, text, (user.tags as Record<string, string>).downstream)
    return
  }
  if (text === 'human') {
    const created = await client.callAction({ type: 'hitl:createUser', input: { name: 'Vera Visitor' } })
    const endUserId = (created.output as { userId: string }).userId
    await client.updateUser({ id: message.userId, tags: { downstream: endUserId } })
    await client.updateUser({ id: endUserId, tags: { upstream: message.userId } })
    const started = await client.callAction({
      type: 'hitl:startHitl',
      input: { userId: endUserId, title: 'The visitor asked for a person', messageHistory: [] },
    })
    const hitlId = (started.output as { conversationId: string }).conversationId
    await client.updateConversation({ id: message.conversationId, tags: { downstream: hitlId } })
    await client.updateConversation({ id: hitlId, tags: { upstream: message.conversationId } })
    await say(client, ctx.botId, message.conversationId, 'Connecting you to a person')
    return
  }
  await say(client, ctx.botId, message.conversationId, 'bot answered: ' + text)
})

bot.event(async ({ event, client, ctx }) => {
  if (event.type !== 'hitl:hitlAssigned' && event.type !== 'hitl:hitlStopped') return
  const { conversationId } = event.payload as { conversationId: string }
  const { conversation } = await client.getConversation({ id: conversationId })
  const upstream = (conversation.tags as Record<string, string | undefined>).upstream
  if (!upstream) return
  if (event.type === 'hitl:hitlAssigned') {
    await say(client, ctx.botId, upstream, 'An agent joined')
    return
  }
  await client.updateConversation({ id: upstream, tags: { downstream: '' } })
  await say(client, ctx.botId, upstream, 'Back to the bot')
})

export default bot
`;

const project = await initBotProject('hitl-bot', HITL_BOT);
after(() => project.remove());

const noSandbox = await sandboxSkip();
for (const store of await testStores()) {
  describe(
    `an SDK bot handing over through the hitl integration (${store.name})`,
    { skip: store.skip ?? noSandbox, timeout: 600_000 },
    () => {
      let t: TestServer;
      let agent: Admin;
      let viewer: Admin;
      let botId: string;
      const sessions: ChatSession[] = [];
      let since: string;

      before(async () => {
        t = await startTestServer(store);
        agent = adminAs(t, (await memberToken(t, 'agent')).token, t.workspaceId);
        viewer = adminAs(t, (await memberToken(t, 'viewer')).token, t.workspaceId);
        since = new Date().toISOString();
        botId = (await t.client().createBot({ name: 'sdk hitl bot' })).bot.id;
        assert.match(await deployWithBp(t, project, botId), /Bot deployed/);
      });
      after(async () => {
        for (const s of sessions) await s.close();
        await t?.close();
      });

      const open = async () => {
        const session = await ChatSession.open(await chatUrlOf(t, botId));
        sessions.push(session);
        return session;
      };
      /** The next bot replies' texts; what the bot logged says why they did not come. */
      const next = (session: ChatSession, count: number) =>
        session.nextTexts(count, 60_000).catch(async (err: unknown) => {
          const logs = (await logsSince(t, botId, since)).map((l) => `${l.level}: ${l.message}`);
          throw new Error(`${String(err)}\nbot logs:\n${logs.join('\n')}`);
        });
      const handoffOf = (conversationId: string) =>
        waitFor('the hitl handoff in the queue', async () =>
          (await agent.listHandoffs({ id: botId })).handoffs.find((h) => h.conversationId === conversationId),
        );

      test('the agent takes it and answers; the visitor and the agent hear each other; resolve gives the visitor back to the bot', async () => {
        const visitor = await open();
        await visitor.say('hello');
        assert.deepEqual(await next(visitor, 1), ['bot answered: hello']);
        await visitor.say('human');
        assert.deepEqual(await next(visitor, 1), ['Connecting you to a person']);

        const { handoffs } = await agent.listHandoffs({ id: botId, status: 'pending' });
        const pending = handoffs.find((h) => h.source === 'hitl');
        assert.ok(pending, JSON.stringify(handoffs));
        assert.equal(pending.reason, 'The visitor asked for a person');
        assert.ok(pending.hitlConversationId);
        // The queue names the visitor's conversation (the one the chat client knows, by its Runtime id).
        const visitorConversationId = pending.conversationId;
        assert.equal((await handoffOf(visitorConversationId)).id, pending.id);

        // A viewer may not take it.
        assert.equal((await failure(viewer.assignHandoff({ id: botId, handoffId: pending.id }))).status, 403);

        const { handoff: taken } = await agent.assignHandoff({ id: botId, handoffId: pending.id });
        assert.ok(taken.agent);
        assert.deepEqual(await next(visitor, 1), ['An agent joined']);

        await agent.createHandoffMessage({
          id: botId,
          handoffId: pending.id,
          payload: { type: 'text', text: 'Hi, I am Ada. How can I help?' },
        });
        // Once, from the agent's user (the bot forwarded it naming them).
        const [fromAgent] = await visitor.nextReplies(1, 60_000);
        assert.ok(fromAgent);
        assert.equal(textOf(fromAgent), 'Hi, I am Ada. How can I help?');
        assert.equal(fromAgent.userId, taken.agent.userId);

        await visitor.say('My parcel is late');
        const seen = await waitFor(
          'the visitor’s words in the agent’s transcript',
          async () => {
            const { messages } = await agent.getHandoff({ id: botId, handoffId: pending.id });
            const texts = messages.map((m) => m.payload.text);
            return texts.includes('My parcel is late') && texts;
          },
          60_000,
        );
        // Each once: the conversation before the handoff, then the agent's words and the visitor's copied.
        assert.deepEqual(seen, [
          'hello',
          'bot answered: hello',
          'human',
          'Hi, I am Ada. How can I help?',
          'My parcel is late',
        ]);

        await agent.resolveHandoff({ id: botId, handoffId: pending.id });
        assert.deepEqual(await next(visitor, 1), ['Back to the bot']);
        await visitor.say('thanks');
        assert.deepEqual(await next(visitor, 1), ['bot answered: thanks']);
        assert.deepEqual(visitor.unread(), []);
      });

      test('the bot stops it (stopHitl): resolved as the bot', async () => {
        const visitor = await open();
        await visitor.say('human');
        assert.deepEqual(await next(visitor, 1), ['Connecting you to a person']);
        const pending = (await agent.listHandoffs({ id: botId, status: 'pending' })).handoffs.find(
          (h) => h.source === 'hitl',
        );
        assert.ok(pending);
        await visitor.say('bye');
        assert.deepEqual(await next(visitor, 1), ['You left the agent: back to the bot']);
        const { handoff, events } = await agent.getHandoff({ id: botId, handoffId: pending.id });
        assert.equal(handoff.status, 'resolved');
        assert.deepEqual(
          events.map((e) => [e.action, e.accountId]),
          [
            ['started', undefined],
            ['resolved', undefined],
          ],
        );
        await visitor.say('still there?');
        assert.deepEqual(await next(visitor, 1), ['bot answered: still there?']);
      });
    },
  );
}
