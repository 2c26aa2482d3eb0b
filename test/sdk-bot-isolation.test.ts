// SDK bot bundles (hand-written, deployed with updateBot as `bp deploy` does) that misbehave, each in its
// own process: stopped with the reason, harming nothing else; and an SDK bot's own actions.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@botpress/client';
import { chatUrlOf } from './helpers/bp-cli.ts';
import { ChatSession, turnOutcome } from './helpers/chat-bots.ts';
import { waitForLog } from './helpers/deployed-bots.ts';
import { waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

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

  test('a deploy sends the bundle `register` with its webhook URL; a register that fails is logged and the bot still runs', async () => {
    const since = new Date().toISOString();
    const registering = bundle('await reply(text);').replace(
      "if (req.headers['x-bp-operation'] !== 'event_received') return { status: 200 };",
      "if (req.headers['x-bp-operation'] === 'register') throw new Error('register saw ' + JSON.parse(req.body).webhookUrl);\n    if (req.headers['x-bp-operation'] !== 'event_received') return { status: 200 };",
    );
    const { botId, session } = await deploy('registering', registering);
    const webhookUrl = (await (
      await fetch(`${t.url}/v1/admin/bots/${botId}/webhook`, {
        headers: { authorization: `Bearer ${t.token}`, 'x-workspace-id': t.workspaceId },
      })
    ).json()) as { webhook: { url: string } };
    const line = await waitForLog(t, botId, since, /^register failed: /, 'error', 20_000);
    assert.ok(line.message.includes(`register saw ${webhookUrl.webhook.url}`), line.message);
    await session.say('still here');
    assert.deepEqual(await session.nextTexts(1, 30_000), ['still here']);
  });

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
    await waitForLog(t, botId, since, /wrote more output than its logs take/, 'error', 20_000);
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

describe('the actions of an SDK bot run in its handler (action_triggered)', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer(sqlite);
  });
  after(async () => {
    await t?.close();
  });

  const ACTIONS_BUNDLE = `let runs = 0;
module.exports = {
  handler: async (req) => {
    if (req.headers['x-bp-operation'] !== 'action_triggered') return { status: 200 };
    const { type, input } = JSON.parse(req.body);
    if (type === 'double') return { status: 200, body: JSON.stringify({ output: { value: input.n * 2, runs: ++runs } }) };
    if (type === 'refuse') return { status: 400, body: JSON.stringify({ code: 400, type: 'InvalidPayload', message: 'not today' }) };
    if (type === 'broken') return { status: 200, body: 'not json' };
    return { status: 400, body: JSON.stringify({ message: 'unknown action ' + type }) };
  },
};
`;
  const schema = (properties: Record<string, unknown>, required: string[] = []) => ({
    schema: { type: 'object', properties, required },
  });

  test('callAction runs the declared action, checks its schemas, and caches a cacheable one', async () => {
    const { bot } = await t.client().createBot({
      name: 'sdk actions',
      code: ACTIONS_BUNDLE,
      actions: {
        double: {
          input: schema({ n: { type: 'number' } }, ['n']),
          output: schema({ value: { type: 'number' } }, ['value']),
          cacheable: true,
        },
        refuse: { input: schema({}), output: schema({}) },
        broken: { input: schema({}), output: schema({}) },
      },
    });
    const runtime = t.client({ botId: bot.id });
    const first = await runtime.callAction({ type: 'double', input: { n: 21 } });
    assert.deepEqual(first.output, { value: 42, runs: 1 });
    assert.equal(first.meta.cached, false);
    const again = await runtime.callAction({ type: 'double', input: { n: 21 } });
    assert.deepEqual(again.output, { value: 42, runs: 1 }, 'answered from the cache, not run again');
    assert.equal(again.meta.cached, true);

    const refusals: [string, Record<string, unknown>, string, RegExp][] = [
      ['double', { n: 'x' }, 'InvalidPayload', /input/],
      ['refuse', {}, 'Runtime', /The action "refuse" failed: the bot answered 400: not today/],
      ['broken', {}, 'Runtime', /answered no output object/],
      ['missing', {}, 'ResourceNotFound', /missing/],
    ];
    for (const [type, input, errorType, message] of refusals) {
      await assert.rejects(
        runtime.callAction({ type, input }),
        (err: { type?: string; message?: string }) => {
          assert.equal(err.type, errorType, `${type}: ${err.message}`);
          assert.match(err.message ?? '', message);
          return true;
        },
      );
    }
  });
});

describe('SDK bot processes stop when idle and are bounded in number', () => {
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
});
