// Bots written with @botpress/sdk and deployed with the official `bp` CLI run on Parley: built from the
// CLI's own template (and a bot written for these tests), deployed with `bp deploy` to a running server,
// and talked to with the official chat client.
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { after, before, describe, test } from 'node:test';
import { chatUrlOf, deployWithBp, initBotProject } from '../helpers/bp-cli.ts';
import { ChatSession, turnOutcome } from '../helpers/chat-bots.ts';
import { logsSince, waitForLog } from '../helpers/deployed-bots.ts';
import { waitFor } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';

/** A bot for the tests in SDK 0.10's style: a conversation state, its configuration, a message handler. */
const COUNTER_BOT = `import { Bot, z } from '@botpress/sdk'

const bot = new Bot({
  integrations: {},
  configuration: { schema: z.object({ word: z.string().optional() }) },
  states: { counter: { type: 'conversation', schema: z.object({ count: z.number() }) } },
  events: {},
  recurringEvents: {},
})

bot.message(async ({ message, client, ctx }) => {
  const key = { type: 'conversation' as const, id: message.conversationId, name: 'counter' }
  const count = await client
    .getState(key)
    .then(({ state }) => (state.payload as { count: number }).count)
    .catch(() => 0)
  await client.setState({ ...key, payload: { count: count + 1 } })
  const word = (ctx.configuration as { word?: string }).word ?? 'count'
  await client.createMessage({
    conversationId: message.conversationId,
    userId: ctx.botId,
    tags: {},
    type: 'text',
    payload: { text: \`\${word} \${count + 1}: \${message.payload.text}\` },
  })
})

export default bot
`;

/**
 * A bot whose recurring event (every second: Parley's cron takes seconds) adds to a bot state, and which
 * keeps the path and body of the last request to its webhook.
 */
const TICKER_BOT = `import { Bot, z } from '@botpress/sdk'

const bot = new Bot({
  integrations: {},
  configuration: { schema: z.object({}) },
  states: {
    ticks: { type: 'bot', schema: z.object({ total: z.number() }) },
    hooked: { type: 'bot', schema: z.object({ path: z.string(), body: z.string() }) },
  },
  events: { tick: { schema: z.object({ step: z.number() }) } },
  recurringEvents: { everySecond: { type: 'tick', payload: { step: 5 }, schedule: { cron: '* * * * * *' } } },
})

bot.event(async ({ event, client, ctx }) => {
  if (event.type === 'webhook') {
    const { path, body } = event.payload as { path: string; body: string }
    await client.setState({ type: 'bot', id: ctx.botId, name: 'hooked', payload: { path, body } })
    return
  }
  if (event.type !== 'tick') return
  const key = { type: 'bot' as const, id: ctx.botId, name: 'ticks' }
  const total = await client
    .getState(key)
    .then(({ state }) => (state.payload as { total: number }).total)
    .catch(() => 0)
  await client.setState({ ...key, payload: { total: total + (event.payload as { step: number }).step } })
})

export default bot
`;

// Each project is made once with `bp init` and deployed to a server of each store.
const echo = await initBotProject('echo-bot');
const counter = await initBotProject('counter-bot', COUNTER_BOT);
const ticker = await initBotProject('ticker-bot', TICKER_BOT);
after(async () => {
  for (const project of [echo, counter, ticker]) await project.remove();
});

const noSandbox = await sandboxSkip();
for (const store of await testStores()) {
  // Each test builds and deploys with the real CLI: minutes in all on a loaded machine.
  describe(
    `SDK bots deployed with bp deploy (${store.name})`,
    { skip: store.skip ?? noSandbox, timeout: 600_000 },
    () => {
      let t: TestServer;
      const sessions: ChatSession[] = [];

      before(async () => {
        t = await startTestServer(store);
      });
      after(async () => {
        for (const s of sessions) await s.close();
        await t?.close();
      });

      const open = async (url: string) => {
        const session = await ChatSession.open(url);
        sessions.push(session);
        return session;
      };

      test('the echo bot of `bp init`, deployed with `bp deploy`, answers as on the hosted platform', async () => {
        const { bot } = await t.client().createBot({ name: 'sdk echo' });
        const since = new Date().toISOString();
        const output = await deployWithBp(t, echo, bot.id);
        assert.match(output, /Bot deployed/);

        const deployed = (await t.client().getBot({ id: bot.id })).bot;
        assert.equal((deployed as { runtime?: string }).runtime, 'botpress-sdk', 'getBot says what runs it');
        assert.ok(deployed.deployedAt);
        // The deploy sent the bundle `register`, as the hosted platform does, and it answered.
        await waitForLog(t, bot.id, since, /^registered version /, 'info', 30_000);
        const session = await open(await chatUrlOf(t, bot.id));
        await session.say('hello');
        assert.deepEqual(await session.nextTexts(1, 30_000), ['You said: hello']);
        await session.say('and again');
        assert.deepEqual(await session.nextTexts(1), ['You said: and again']);
        // What the bot writes to its console is in its logs.
        await waitForLog(t, bot.id, since, /Received message/, 'info');
      });

      test('a bot with a state and configuration keeps both across messages and deploys', async () => {
        const admin = t.client();
        const since = new Date().toISOString();
        const { bot } = await admin.createBot({ name: 'sdk counter' });
        await deployWithBp(t, counter, bot.id);
        const deployed = (await admin.getBot({ id: bot.id })).bot;
        assert.deepEqual(
          Object.keys(deployed.states),
          ['counter'],
          'bp deploy sent the states of the definition',
        );

        const session = await open(await chatUrlOf(t, bot.id));
        await session.say('one');
        assert.deepEqual(await session.nextTexts(1, 30_000), ['count 1: one']);
        await session.say('two');
        assert.deepEqual(await session.nextTexts(1), ['count 2: two']);

        // The configuration's values reach the bot; a new deploy (the schema alone) keeps them.
        await admin.updateBot({ id: bot.id, configuration: { data: { word: 'tally' } } });
        await deployWithBp(t, counter, bot.id);
        const three = await session.say('three');
        const runtime = t.client({ botId: bot.id });
        const outcome = await turnOutcome(runtime, three, 30_000).catch(async (err: Error) => {
          // What the queue and the bot's logs say, to tell a slow turn from one that waits on another.
          const { events } = await runtime.listEvents({ conversationId: session.conversationId });
          const logs = await logsSince(t, bot.id, since);
          throw new Error(
            `${err.message}; events: ${JSON.stringify(events.map((e) => [e.type, e.status, e.failureReason]))}; logs: ${JSON.stringify(logs.map((l) => `${l.timestamp} ${l.level} ${l.message}`)).slice(0, 4000)}`,
          );
        });
        assert.equal(outcome.status, 'processed', `the event of "three": ${outcome.failureReason ?? ''}`);
        assert.deepEqual(await session.nextTexts(1), ['tally 3: three']);

        // Each `bp deploy` kept a version; rolling back to the first keeps the values set since, and the
        // conversation's state.
        const { versions } = await admin.listBotVersions({ id: bot.id });
        assert.deepEqual(
          versions.map((v) => v.name),
          ['v2', 'v1'],
        );
        await admin.deployBotVersion({ id: bot.id, versionId: versions[1]?.id ?? '' });
        await session.say('four');
        assert.deepEqual(await session.nextTexts(1, 30_000), ['tally 4: four']);
      });

      test('a recurring event of the definition fires on its schedule, handled by the bot', async () => {
        const { bot } = await t.client().createBot({ name: 'sdk ticker' });
        await deployWithBp(t, ticker, bot.id);
        const deployed = (await t.client().getBot({ id: bot.id })).bot;
        assert.deepEqual(Object.keys(deployed.recurringEvents), ['everySecond']);
        const runtime = t.client({ botId: bot.id });
        const total = await waitFor(
          'the bot to handle a tick',
          async () => {
            const { state } = await runtime.getState({ type: 'bot', id: bot.id, name: 'ticks' });
            return (state.payload as { total: number }).total;
          },
          40_000,
          250,
        );
        assert.equal(total % 5, 0, 'the payload of the recurring event reached the bot');
        const { events } = await runtime.listEvents({ type: 'tick' });
        assert.ok(events.length >= 1 && events.every((e) => e.payload.step === 5));

        // A request to the bot's webhook reaches its event handler as a `webhook` event.
        const { signingSecret } = (await t.client().getBot({ id: bot.id })).bot;
        const { webhook } = (await (
          await fetch(`${t.url}/v1/admin/bots/${bot.id}/webhook`, {
            headers: { authorization: `Bearer ${t.token}`, 'x-workspace-id': t.workspaceId },
          })
        ).json()) as { webhook: { url: string } };
        const body = JSON.stringify({ paid: true });
        const at = new Date();
        const sent = await fetch(`${webhook.url}/payments`, {
          method: 'POST',
          body,
          headers: {
            'webhook-id': 'msg_1',
            'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
            'webhook-signature': new Webhook(signingSecret).sign('msg_1', at, body),
          },
        });
        assert.equal(sent.status, 202);
        const hooked = await waitFor(
          'the bot to handle its webhook',
          async () => {
            const found = await runtime
              .getState({ type: 'bot', id: bot.id, name: 'hooked' })
              .catch(() => undefined);
            return found?.state.payload;
          },
          40_000,
          250,
        );
        assert.deepEqual(hooked, { path: '/payments', body });
      });
    },
  );
}
