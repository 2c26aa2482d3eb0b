// Bots written with @botpress/sdk and deployed with the official `bp` CLI run on Parley: built from the
// CLI's own template (and a bot written for these tests), deployed with `bp deploy` to a running server,
// and talked to with the official chat client. Then bundles that misbehave, each in its own process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@botpress/client';
import { deployWithBp, initBotProject } from './helpers/bp-cli.ts';
import type { BotProject } from './helpers/bp-cli.ts';
import { ChatSession, turnOutcome } from './helpers/chat-bots.ts';
import { waitForLog } from './helpers/deployed-bots.ts';
import { waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

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

/** A bot whose recurring event (every second: Parley's cron takes seconds) adds to a bot state. */
const TICKER_BOT = `import { Bot, z } from '@botpress/sdk'

const bot = new Bot({
  integrations: {},
  configuration: { schema: z.object({}) },
  states: { ticks: { type: 'bot', schema: z.object({ total: z.number() }) } },
  events: { tick: { schema: z.object({ step: z.number() }) } },
  recurringEvents: { everySecond: { type: 'tick', payload: { step: 5 }, schedule: { cron: '* * * * * *' } } },
})

bot.event(async ({ event, client, ctx }) => {
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

async function chatUrlOf(t: TestServer, botId: string): Promise<string> {
  const { bot } = await t.client().getBot({ id: botId });
  const chat = bot.integrations.chat;
  assert.ok(chat?.enabled, `the chat channel is enabled after bp deploy: ${JSON.stringify(chat)}`);
  assert.ok(chat.webhookUrl);
  return chat.webhookUrl;
}

for (const store of await testStores()) {
  describe(`SDK bots deployed with bp deploy (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    const projects: BotProject[] = [];
    const sessions: ChatSession[] = [];

    before(async () => {
      t = await startTestServer(store);
    });
    after(async () => {
      for (const s of sessions) await s.close();
      await t?.close();
      for (const p of projects) await p.remove();
    });

    const open = async (url: string) => {
      const session = await ChatSession.open(url);
      sessions.push(session);
      return session;
    };

    test('the echo bot of `bp init`, deployed with `bp deploy`, answers as on the hosted platform', async () => {
      const project = await initBotProject('echo-bot');
      projects.push(project);
      const { bot } = await t.client().createBot({ name: 'sdk echo' });
      const since = new Date().toISOString();
      const output = await deployWithBp(t, project, bot.id);
      assert.match(output, /Bot deployed/);

      const deployed = (await t.client().getBot({ id: bot.id })).bot;
      assert.equal((deployed as { runtime?: string }).runtime, 'botpress-sdk', 'getBot says what runs it');
      assert.ok(deployed.deployedAt);
      const session = await open(await chatUrlOf(t, bot.id));
      await session.say('hello');
      assert.deepEqual(await session.nextTexts(1, 30_000), ['You said: hello']);
      await session.say('and again');
      assert.deepEqual(await session.nextTexts(1), ['You said: and again']);
      // What the bot writes to its console is in its logs.
      await waitForLog(t, bot.id, since, /Received message/, 'info');
    });

    test('a bot with a state and configuration keeps both across messages and deploys', async () => {
      const project = await initBotProject('counter-bot', COUNTER_BOT);
      projects.push(project);
      const admin = t.client();
      const { bot } = await admin.createBot({ name: 'sdk counter' });
      await deployWithBp(t, project, bot.id);
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
      await deployWithBp(t, project, bot.id);
      await session.say('three');
      assert.deepEqual(await session.nextTexts(1, 30_000), ['tally 3: three']);
    });

    test('a recurring event of the definition fires on its schedule, handled by the bot', async () => {
      const project = await initBotProject('ticker-bot', TICKER_BOT);
      projects.push(project);
      const { bot } = await t.client().createBot({ name: 'sdk ticker' });
      await deployWithBp(t, project, bot.id);
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
    });
  });
}

/** A hand-written bundle: `handle(text, reply)` runs for each chat message; reply posts to the Runtime API. */
function bundle(handle: string): string {
  return `
const reply = async (req, event, text) => {
  const res = await fetch(process.env.BP_API_URL + '/v1/chat/messages', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer ' + process.env.BP_TOKEN,
      'x-bot-id': req.headers['x-bot-id'],
    },
    body: JSON.stringify({ conversationId: event.conversationId, userId: req.headers['x-bot-id'], type: 'text', payload: { text }, tags: {} }),
  });
  if (!res.ok) throw new Error('reply failed: ' + res.status + ' ' + (await res.text()));
};
module.exports = {
  handler: async (req) => {
    if (req.headers['x-bp-operation'] !== 'event_received') return { status: 200 };
    const event = JSON.parse(req.body).event;
    const text = event.payload.message.payload.text;
    await (async (text, reply) => { ${handle} })(text, (t) => reply(req, event, t));
    return { status: 200 };
  },
};
`;
}

const sqlite = (await testStores())[0] ?? { name: 'sqlite' };
describe('SDK bot processes that misbehave are stopped with the reason, and harm nothing else', () => {
  let t: TestServer;
  const sessions: ChatSession[] = [];

  before(async () => {
    t = await startTestServer(sqlite, {
      sdkBotTimeoutSeconds: '2',
      sdkBotMemoryMb: '160',
    });
  });
  after(async () => {
    for (const s of sessions) await s.close();
    await t?.close();
  });

  const deploy = async (name: string, code: string) => {
    const { bot } = await t.client().createBot({ name, code });
    const session = await ChatSession.open(await chatUrlOf(t, bot.id));
    sessions.push(session);
    return { botId: bot.id, session, runtime: (): Client => t.client({ botId: bot.id }) };
  };

  test('a bundle sees only its own file, its own environment, and cannot start processes, threads or servers', async () => {
    const probe = bundle(`
      const outcome = (f) => { try { f(); return 'allowed'; } catch (e) { return e.code || e.message; } };
      const results = [
        'read:' + outcome(() => require('node:fs').readFileSync('/etc/hostname')),
        'list:' + outcome(() => require('node:fs').readdirSync('/')),
        'write:' + outcome(() => require('node:fs').writeFileSync('/tmp/parley-sdk-bot-probe', 'x')),
        'spawn:' + outcome(() => require('node:child_process').execSync('true')),
        'worker:' + outcome(() => new (require('node:worker_threads').Worker)('1', { eval: true })),
        'listen:' + outcome(() => require('node:http').createServer().listen(0)),
        'env:' + Object.keys(process.env).sort().join(','),
      ];
      await reply(results.join(' '));`);
    const { session } = await deploy('probe', probe);
    await session.say('probe');
    const [answer] = await session.nextTexts(1, 30_000);
    assert.equal(
      answer,
      [
        'read:ERR_ACCESS_DENIED',
        'list:ERR_ACCESS_DENIED',
        'write:ERR_ACCESS_DENIED',
        'spawn:ERR_ACCESS_DENIED',
        'worker:ERR_ACCESS_DENIED',
        'listen:ERR_ACCESS_DENIED',
        'env:BP_API_URL,BP_BOT_ID,BP_TOKEN,BP_WORKSPACE_ID',
      ].join(' '),
    );
  });

  test('a bundle that throws as it loads is logged with its error, and its events wait', async () => {
    const since = new Date().toISOString();
    const { botId, session } = await deploy('broken', `throw new Error('broken at load');`);
    await session.say('anyone?');
    await waitForLog(t, botId, since, /could not load its bundle: broken at load/, 'error', 20_000);
    assert.deepEqual(session.unread(), []);
  });

  test('a call past its time limit stops the process and fails its event; the next message starts it again', async () => {
    const since = new Date().toISOString();
    const { botId, session, runtime } = await deploy(
      'slow',
      bundle(`if (text === 'hang') await new Promise(() => {}); await reply('fine: ' + text);`),
    );
    const hung = await session.say('hang');
    const outcome = await turnOutcome(runtime(), hung, 20_000);
    assert.equal(outcome.status, 'failed');
    assert.match(outcome.failureReason ?? '', /did not answer within 2 s/);
    await waitForLog(t, botId, since, /ran past its time limit of 2 s/, 'error');
    await session.say('hello');
    assert.deepEqual(await session.nextTexts(1, 20_000), ['fine: hello']);
  });

  test('memory past the limit, buffers included, stops the process; another bot answers all along', async () => {
    const since = new Date().toISOString();
    const hog = await deploy(
      'hog',
      bundle(
        `const kept = []; for (;;) { kept.push(Buffer.alloc(16 * 1024 * 1024, 1)); await new Promise((r) => setTimeout(r, 5)); }`,
      ),
    );
    const calm = await deploy('calm', bundle(`await reply('calm: ' + text);`));
    await hog.session.say('eat');
    await waitForLog(t, hog.botId, since, /held more than 160 MB of memory/, 'error', 20_000);
    await calm.session.say('still here?');
    assert.deepEqual(await calm.session.nextTexts(1, 20_000), ['calm: still here?']);
    const health = await fetch(`${t.url}/healthz`);
    assert.equal(health.status, 200);
  });

  test('a bundle that floods its output is stopped, and what it wrote before is in its logs', async () => {
    const since = new Date().toISOString();
    const { botId, session } = await deploy(
      'flood',
      bundle(
        `console.log('about to flood'); for (;;) { process.stdout.write('x'.repeat(64 * 1024) + '\\n'); await new Promise((r) => setImmediate(r)); }`,
      ),
    );
    await session.say('go');
    await waitForLog(t, botId, since, /wrote more than 1 MB of output in a second/, 'error', 20_000);
    await waitForLog(t, botId, since, /^about to flood$/, 'info');
  });

  test('a bundle that exits fails the event it was handling, and is started again for the next one', async () => {
    const since = new Date().toISOString();
    const { botId, session, runtime } = await deploy(
      'quitter',
      bundle(`if (text === 'quit') process.exit(3); await reply('still: ' + text);`),
    );
    const quit = await session.say('quit');
    const outcome = await turnOutcome(runtime(), quit, 20_000);
    assert.equal(outcome.status, 'failed');
    assert.match(outcome.failureReason ?? '', /the bot process exited with code 3/);
    await waitForLog(t, botId, since, /the bot process exited with code 3/, 'error');
    await session.say('hi');
    assert.deepEqual(await session.nextTexts(1, 20_000), ['still: hi']);
  });
});
