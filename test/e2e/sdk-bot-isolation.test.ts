// SDK bot bundles (hand-written, deployed with updateBot as `bp deploy` does) that misbehave, each in its
// own process: stopped with the reason, harming nothing else; and an SDK bot's own actions.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_FALLBACK_TEXT } from '../../src/domain/chat/fallback-message.ts';
import type { Client } from '@botpress/client';
import { chatUrlOf } from '../helpers/bp-cli.ts';
import { ChatSession, turnOutcome } from '../helpers/chat-bots.ts';
import { waitForLog } from '../helpers/deployed-bots.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { chatBundle as bundle } from '../helpers/sdk-bundles.ts';

const sqlite = (await testStores())[0] ?? { name: 'sqlite' };
const noSandbox = await sandboxSkip();
describe(
  'SDK bot processes that misbehave are stopped with the reason, and harm nothing else',
  { skip: noSandbox },
  () => {
    let t: TestServer;
    const sessions: ChatSession[] = [];

    before(async () => {
      t = await startTestServer(sqlite, {
        // Long enough that the memory hog reaches its limit inside one call on a CI machine whose cores are
        // taken by other suites (its call ran past 2 s there once, before the kernel stopped it).
        sdkBotTimeoutSeconds: '5',
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

    test('a bundle sees only its own file and its own environment, and cannot start processes or threads', async () => {
      const probe = bundle(`
      const outcome = (f) => { try { f(); return 'allowed'; } catch (e) { return e.code || e.message; } };
      const results = [
        'read:' + outcome(() => require('node:fs').readFileSync('/etc/hostname')),
        'list:' + outcome(() => require('node:fs').readdirSync('/')),
        'write:' + outcome(() => require('node:fs').writeFileSync('/tmp/parley-sdk-bot-probe', 'x')),
        'spawn:' + outcome(() => require('node:child_process').execSync('true')),
        'worker:' + outcome(() => new (require('node:worker_threads').Worker)('1', { eval: true })),
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
          // The API's address, the bot's ids and key, and the egress proxy's address: nothing of the server's.
          'env:BP_API_URL,BP_BOT_ID,BP_TOKEN,BP_WORKSPACE_ID,HTTPS_PROXY,HTTP_PROXY,NO_PROXY,http_proxy,https_proxy,no_proxy',
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
      assert.match(outcome.failureReason ?? '', /did not answer within 5 s/);
      await waitForLog(t, botId, since, /ran past its time limit of 5 s/, 'error');
      await session.say('hello');
      // The failed turn left the visitor its fallback message, not silence.
      assert.deepEqual(await session.nextTexts(2, 20_000), [DEFAULT_FALLBACK_TEXT, 'fine: hello']);
    });

    test('memory past the limit, buffers included, stops the process; another bot answers all along', async () => {
      const since = new Date().toISOString();
      const hog = await deploy(
        'hog',
        bundle(`const kept = []; for (;;) kept.push(Buffer.alloc(32 * 1024 * 1024, 1));`),
      );
      const calm = await deploy('calm', bundle(`await reply('calm: ' + text);`));
      await hog.session.say('eat');
      await waitForLog(
        t,
        hog.botId,
        since,
        /held more than 160 MB of memory \(the kernel stopped it\)/,
        'error',
        20_000,
      );
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
          // It waits for the pipe to drain as a well-behaved writer does, so it floods for as long as the
          // server reads, never holding more than its limit of memory: only the output budget stops it.
          // (A bot that writes without waiting keeps what the pipe has not taken, and its memory limit
          // stops it first whenever the server reads slower than it writes, as beside a whole test run.)
          `console.log('about to flood'); const line = 'x'.repeat(64 * 1024) + '\\n'; for (;;) { if (!process.stdout.write(line)) await new Promise((r) => process.stdout.once('drain', r)); }`,
        ),
      );
      await session.say('go');
      await waitForLog(t, botId, since, /wrote more output than its logs take/, 'error', 60_000);
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
      assert.deepEqual(await session.nextTexts(2, 20_000), [DEFAULT_FALLBACK_TEXT, 'still: hi']);
    });
  },
);

describe('the actions of an SDK bot run in its handler (action_triggered)', { skip: noSandbox }, () => {
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
