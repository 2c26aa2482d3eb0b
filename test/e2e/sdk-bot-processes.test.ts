// SDK bot processes as a resource: each bot's process stops when idle and starts again for its next
// message, their number is bounded (the one idle longest makes room), and a workspace at its share waits
// for its own. Apart from test/e2e/sdk-bot-isolation.test.ts so that neither file runs past the runner's
// time limit of a file on a busy machine.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { chatUrlOf } from '../helpers/bp-cli.ts';
import { ChatSession } from '../helpers/chat-bots.ts';
import { waitForLog } from '../helpers/deployed-bots.ts';
import { waitFor } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { chatBundle as bundle } from '../helpers/sdk-bundles.ts';

const sqlite = (await testStores())[0] ?? { name: 'sqlite' };
const noSandbox = await sandboxSkip();

describe('SDK bot processes stop when idle and are bounded in number', { skip: noSandbox }, () => {
  const servers: TestServer[] = [];
  const sessions: ChatSession[] = [];
  after(async () => {
    for (const s of sessions) await s.close();
    for (const t of servers) await t.close();
  });

  const server = async (settings: Parameters<typeof startTestServer>[1]) => {
    const t = await startTestServer(sqlite, settings);
    servers.push(t);
    return t;
  };

  /** A bot's running process shows as its API key (made for the process, deleted when it ends). */
  const processKeys = async (t: TestServer, botId: string) =>
    (await t.client().listBotApiKeys({ botId })).baks.filter((k) => k.note.startsWith('process of version'))
      .length;

  /** A bot of `code`, and a chat session with it (closed after the suite). */
  const talkTo = async (t: TestServer, name: string, code: string) => {
    const { bot } = await t.client().createBot({ name, code });
    const session = await ChatSession.open(await chatUrlOf(t, bot.id));
    sessions.push(session);
    return { botId: bot.id, session };
  };

  const echo = (t: TestServer, name: string) => talkTo(t, name, bundle(`await reply('${name}: ' + text);`));

  test('the first messages of many conversations to a bot with no process start one process', async () => {
    const t = await server({});
    const { botId, session } = await echo(t, 'crowd');
    const others = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const other = await ChatSession.open(await chatUrlOf(t, botId));
        sessions.push(other);
        return other;
      }),
    );
    const all = [session, ...others];
    await Promise.all(all.map((s, i) => s.say(`hi ${i}`)));
    const answers = await Promise.all(all.map((s) => s.nextTexts(1, 20_000)));
    assert.deepEqual(
      answers.map(([text]) => text),
      all.map((_, i) => `crowd: hi ${i}`),
    );
    assert.equal(await processKeys(t, botId), 1, 'one process serves them all');
  });

  test('a new version starts at once, whatever the backoff of the version whose process kept ending', async () => {
    const t = await server({});
    const since = new Date().toISOString();
    // Its process ends as soon as it starts: each start waits twice as long as the one before.
    const { botId, session } = await talkTo(
      t,
      'crash-loop',
      `process.exit(3);\n${bundle('await reply(text);')}`,
    );
    await session.say('are you there?');
    await waitForLog(t, botId, since, /in (4|8|16|32) s at the earliest/, 'error', 60_000);
    await t.client().updateBot({ id: botId, code: bundle("await reply('fixed: ' + text);") });
    const deployed = Date.now();
    // A conversation of its own: the first one's message waits for its own retry.
    const fresh = await ChatSession.open(await chatUrlOf(t, botId));
    sessions.push(fresh);
    await fresh.say('hello');
    assert.deepEqual(await fresh.nextTexts(1, 20_000), ['fixed: hello']);
    const waited = Date.now() - deployed;
    assert.ok(
      waited < 3500,
      `the new version answered ${waited} ms after its deploy: it waited out the old backoff`,
    );
  });

  test('a server that stops leaves no key of a bot process behind, and answers again after its restart', async () => {
    const t = await server({});
    const { botId, session } = await echo(t, 'restarted');
    await session.say('before');
    assert.deepEqual(await session.nextTexts(1, 20_000), ['restarted: before']);
    assert.equal(await processKeys(t, botId), 1);
    await session.close();
    await t.restart();
    assert.equal(await processKeys(t, botId), 0, 'the key of the stopped process is gone');
    const again = await ChatSession.open(await chatUrlOf(t, botId));
    sessions.push(again);
    await again.say('after');
    assert.deepEqual(await again.nextTexts(1, 20_000), ['restarted: after']);
  });

  test('the key a server that died left for a bot process is deleted when the server starts again', async () => {
    const t = await server({});
    const { botId, session } = await echo(t, 'orphaned');
    await session.say('before');
    assert.deepEqual(await session.nextTexts(1, 20_000), ['orphaned: before']);
    await session.close();
    // What a run that died leaves: a process key whose owner is gone (this one is copied from a live one).
    const { db } = t.server.store;
    const live = await db
      .selectFrom('bot_api_keys')
      .selectAll()
      .where('bot_id', '=', botId)
      .where('process_owner', 'is not', null)
      .executeTakeFirstOrThrow();
    await db
      .insertInto('bot_api_keys')
      .values({
        ...live,
        id: `${live.id}x`,
        token_hash: `${live.token_hash}x`,
        process_owner: 'a-host:12345:dead',
      })
      .execute();
    await t.restart();
    assert.equal(await processKeys(t, botId), 0, 'no key of a process is left');
  });

  test('an idle bot holds no process, and its next message starts one again', async () => {
    const t = await server({ sdkBotIdleSeconds: '1' });
    const { botId, session } = await echo(t, 'napper');
    await session.say('one');
    assert.deepEqual(await session.nextTexts(1, 20_000), ['napper: one']);
    assert.equal(await processKeys(t, botId), 1, 'a process runs for the bot');
    await waitFor('the idle process to stop', async () => (await processKeys(t, botId)) === 0, 20_000, 250);
    await session.say('two');
    assert.deepEqual(await session.nextTexts(1, 20_000), ['napper: two']);
  });

  test('a reply that comes 6 s after the message reaches the official chat client’s listener', async () => {
    const t = await server({});
    const thinking = bundle(
      `await new Promise((r) => setTimeout(r, 6000)); await reply('thought: ' + text);`,
    );
    const { session } = await talkTo(t, 'thinker', thinking);
    await session.say('hmm');
    assert.deepEqual(await session.nextTexts(1, 20_000), ['thought: hmm']);
  });

  test('a bot whose process starts slower than the idle time is not stopped as idle while it starts', async () => {
    const t = await server({ sdkBotIdleSeconds: '1' });
    // Six seconds to load: longer than the idle time, and than the interval idle processes are looked for.
    const slow = `const until = Date.now() + 6000; while (Date.now() < until) {}\n${bundle(`await reply('slow: ' + text);`)}`;
    const { session } = await talkTo(t, 'slow-starter', slow);
    await session.say('hi');
    assert.deepEqual(await session.nextTexts(1, 30_000), ['slow: hi']);
  });

  test('past the limit of processes, the one idle longest stops for the bot that needs one', async () => {
    // Idle processes stop only after 300 s here: what stops the first bot's is the limit.
    const t = await server({ sdkBotProcesses: '1' });
    const first = await echo(t, 'first');
    const second = await echo(t, 'second');
    await first.session.say('a');
    assert.deepEqual(await first.session.nextTexts(1, 20_000), ['first: a']);
    assert.equal(await processKeys(t, first.botId), 1);
    await second.session.say('b');
    assert.deepEqual(await second.session.nextTexts(1, 20_000), ['second: b']);
    await waitFor('the first bot process to give way', async () => (await processKeys(t, first.botId)) === 0);
    await first.session.say('c');
    assert.deepEqual(await first.session.nextTexts(1, 20_000), ['first: c']);
    await waitFor('the second to give way in turn', async () => (await processKeys(t, second.botId)) === 0);
  });

  test('a workspace at its share of the processes waits for its own; another workspace’s bot starts', async () => {
    const t = await server({
      sdkBotProcesses: '3',
      sdkBotProcessesPerWorkspace: '1',
      sdkBotTimeoutSeconds: '8',
    });
    const busy = await talkTo(t, 'busy', bundle(`await new Promise(() => {});`));
    const waiting = await echo(t, 'waiting');
    const workspace = await t.client().createWorkspace({ name: 'neighbours' });
    const neighbours = t.client({ workspaceId: workspace.id });
    const { bot } = await neighbours.createBot({
      name: 'neighbour',
      code: bundle(`await reply('neighbour: ' + text);`),
    });
    const chat = (await neighbours.getBot({ id: bot.id })).bot.integrations.chat;
    assert.ok(chat?.webhookUrl);
    const neighbour = await ChatSession.open(chat.webhookUrl);
    sessions.push(neighbour);

    await busy.session.say('hold');
    await waitFor('the busy bot’s process', async () => (await processKeys(t, busy.botId)) === 1);
    await waiting.session.say('me too');
    await neighbour.say('hello');
    // The other workspace is not held back by this one's share...
    assert.deepEqual(await neighbour.nextTexts(1, 20_000), ['neighbour: hello']);
    // Given the time to start a process of its own (what the neighbour's took, and more).
    await sleep(2000);
    assert.deepEqual(waiting.session.unread(), [], 'its own second bot waits while its one slot is busy');
    // ...and this one's second bot runs once its slot is free (the busy call ends at its time limit).
    assert.deepEqual(await waiting.session.nextTexts(1, 40_000), ['waiting: me too']);
  });
});

describe('an SDK bot’s configuration', { skip: noSandbox }, () => {
  let t: TestServer;
  const sessions: ChatSession[] = [];
  after(async () => {
    for (const s of sessions) await s.close();
    await t?.close();
  });

  test('its code reads the configuration with the schema’s defaults where the data leaves a value out', async () => {
    t = await startTestServer(sqlite, {});
    // What the handler reads: the x-bp-configuration header, as the SDK builds ctx.configuration from it.
    const code = bundle(
      "const { payload } = JSON.parse(Buffer.from(req.headers['x-bp-configuration'], 'base64').toString()); await reply(payload);",
    );
    const schema = {
      type: 'object',
      properties: {
        greeting: { type: 'string', default: 'hello' },
        shout: { type: 'boolean', default: false },
        limits: { type: 'object', default: {}, properties: { turns: { type: 'number', default: 3 } } },
      },
    };
    const configured = async (name: string, data: Record<string, unknown>) => {
      const { bot } = await t.client().createBot({ name, code, configuration: { schema, data } });
      const session = await ChatSession.open(await chatUrlOf(t, bot.id));
      sessions.push(session);
      await session.say('configuration?');
      const [text] = await session.nextTexts(1, 30_000);
      return JSON.parse(text ?? '{}') as Record<string, unknown>;
    };
    assert.deepEqual(await configured('defaults', {}), {
      greeting: 'hello',
      shout: false,
      limits: { turns: 3 },
    });
    // A value given is kept, falsy ones too; a nested object given gets the defaults it leaves out.
    assert.deepEqual(await configured('given', { greeting: '', shout: true, limits: { other: 1 } }), {
      greeting: '',
      shout: true,
      limits: { other: 1, turns: 3 },
    });
  });
});
