// The sandbox seen through deployed bots: bot code that loops, blows its memory, throws, rejects,
// overflows its stack or reaches for the host fails only its own call, with a hosted-product-style error
// (400 Runtime, 504 OperationTimeout) and an error line in the bot's logs; the same bot's next call and
// every other bot keep working.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_FALLBACK_TEXT } from '../../src/domain/chat/fallback-message.ts';
import { isApiError, OperationTimeoutError, RuntimeError } from '@botpress/client';
import {
  deployPackage,
  json,
  logsSince,
  replies,
  send,
  sendAndWait,
  startChat,
  waitForLog,
  waitForReplies,
} from '../helpers/deployed-bots.ts';
import type { Chatter, DeployedBot, Files } from '../helpers/deployed-bots.ts';
import { rejectsWith } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';

const TIMEOUT_MS = 2000;

const ANY_OBJECT = { type: 'object' };

/** Action name -> code. Every action takes and returns any object. */
const ACTIONS: Record<string, string> = {
  good: "console.info('good ran ' + input.n);\nreturn { ok: true, n: Number(input.n ?? 0) + 1 };\n",
  loop: 'while (true) {}\n',
  loopAfterAwait:
    "await client.getState({ type: 'bot', id: event.botId, name: 'none' }).catch(() => null);\nwhile (true) {}\n",
  boom: "throw new Error('boom');\n",
  nope: "await Promise.reject(new Error('nope'));\n",
  bomb: 'const keep = [];\nwhile (true) keep.push(new Array(1e6).fill(1.5));\n',
  recursion: 'function f(): number {\n  return f() + 1;\n}\nreturn { n: f() };\n',
  ctorEscape: "return this.constructor.constructor('return process')();\n",
  typeofProcess: 'return typeof process;\n',
  // `require` written as such is refused at deploy (code cannot import modules): reach it by name instead.
  typeofRequire:
    "return { global: typeof globalThis['req' + 'uire'], fn: Function('return typeof require')() };\n",
  hostEscape:
    'return {\n' +
    "  client: client.anything.constructor('return typeof process')(),\n" +
    "  console: console.log.constructor('return typeof process')(),\n" +
    "  actions: actions.chat.sendEvent.constructor('return typeof process')(),\n" +
    "  caller: (function f() { try { return String(f.caller && f.caller.caller); } catch (e) { return 'refused'; } })(),\n" +
    '};\n',
  typeofWebAssembly: 'return { type: typeof WebAssembly };\n',
  // Each call starts two more, fire and forget, 15 levels deep: 65,535 calls if nothing bounds them.
  fan:
    'const d = Number(input.d ?? 0);\n' +
    "console.info('fan ' + d);\n" +
    'if (d < 15) {\n' +
    '  for (let i = 0; i < 2; i++) {\n' +
    "    void client.callAction({ type: 'fan', input: { d: d + 1 } }).catch(() => null);\n" +
    '  }\n' +
    '}\n' +
    'return { d };\n',
  // Each call awaits the next, as deep as it is let go.
  deep:
    'const d = Number(input.d ?? 0);\n' +
    "const next = await client.callAction({ type: 'deep', input: { d: d + 1 } }).catch((e: Error) => ({ output: { stopped: d, message: e.message } }));\n" +
    'return next.output;\n',
  noisy: "for (let i = 0; i < 100; i++) console.info('z'.repeat(1900));\nreturn {};\n",
};

function sandboxBot(): Files {
  const files: Files = {
    'bot.json': json({
      formatVersion: 1,
      name: 'sandbox-bot',
      limits: { memoryMb: 32, timeoutMs: TIMEOUT_MS },
    }),
    'workflows/main.json': json({
      nodes: [
        { id: 'start', type: 'start', next: 'reply' },
        {
          id: 'reply',
          type: 'standard',
          cards: [
            { type: 'code', code: "if (event.preview === 'loop') {\n  while (true) {}\n}\n" },
            { type: 'say', message: { type: 'text', text: 'ok: {{ event.preview }}' } },
          ],
        },
      ],
    }),
  };
  for (const [name, code] of Object.entries(ACTIONS)) {
    files[`actions/${name}.json`] = json({ input: ANY_OBJECT, output: ANY_OBJECT });
    files[`actions/${name}.ts`] = code;
  }
  return files;
}

const echoBot = (): Files => ({
  'bot.json': json({ formatVersion: 1, name: 'echo-like' }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'echo' },
      {
        id: 'echo',
        type: 'standard',
        cards: [{ type: 'say', message: { type: 'text', text: 'echo: {{ event.preview }}' } }],
      },
    ],
  }),
});

/** Asks a name, then answers with it, unless the answer is `boom`: then a code card throws. */
const askerBot = (): Files => ({
  'bot.json': json({ formatVersion: 1, name: 'asker' }),
  'workflows/main.json': json({
    variables: { name: { type: 'string' } },
    nodes: [
      { id: 'start', type: 'start', next: 'ask' },
      {
        id: 'ask',
        type: 'standard',
        cards: [{ type: 'capture', variable: 'workflow.name', kind: 'text', prompt: 'Your name?' }],
        next: 'greet',
      },
      {
        id: 'greet',
        type: 'standard',
        cards: [
          { type: 'code', code: "if (workflow.name === 'boom') throw new Error('boom');\n" },
          { type: 'say', message: { type: 'text', text: 'Hello {{ workflow.name }}' } },
        ],
      },
    ],
  }),
});

for (const store of await testStores()) {
  describe(`the sandbox through deployed bots (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    let echo: DeployedBot;
    let echoChat: Chatter;
    let goodCalls = 0;
    let echoes = 0;

    before(async () => {
      t = await startTestServer(store);
      bot = await deployPackage(t, sandboxBot());
      echo = await deployPackage(t, echoBot());
      echoChat = await startChat(echo);
    });
    after(() => t?.close());

    /** The same bot's good action still runs, and the other bot still answers a chat message. */
    async function stillWorking(): Promise<void> {
      const n = ++goodCalls;
      const res = await bot.client.callAction({ type: 'good', input: { n } });
      assert.deepEqual(
        res,
        { output: { ok: true, n: n + 1 }, meta: { cached: false } },
        'the good action runs',
      );
      const text = `still there ${++echoes}`;
      await send(echoChat, text);
      const all = await waitForReplies(echo, echoChat, echoes);
      assert.equal(all.at(-1), `echo: ${text}`, 'the other bot answers');
    }

    /** Calls an action that must fail; answers the error. */
    async function failing(
      action: string,
      errorClass: typeof RuntimeError | typeof OperationTimeoutError,
      message: RegExp,
    ): Promise<Error & { code: number; type: string }> {
      return rejectsWith(bot.client.callAction({ type: action, input: {} }), errorClass, message);
    }

    test('an infinite loop: 504 OperationTimeout after the time limit, logged, recovered from', async () => {
      const since = new Date().toISOString();
      const started = Date.now();
      const err = await failing('loop', OperationTimeoutError, /time limit/);
      const took = Date.now() - started;
      assert.equal(err.code, 504);
      assert.equal(err.type, 'OperationTimeout');
      assert.ok(took >= TIMEOUT_MS - 100, `stopped at the time limit, not before (${took} ms)`);
      assert.ok(took < TIMEOUT_MS + 4000, `stopped soon after the time limit (${took} ms)`);
      await waitForLog(t, bot.botId, since, /action "loop" failed \(timeout\)/, 'error');
      await stillWorking();
    });

    test('a loop after an await (outside V8’s own timeout): 504, and the next call gets a fresh isolate', async () => {
      const since = new Date().toISOString();
      const err = await failing('loopAfterAwait', OperationTimeoutError, /time limit/);
      assert.equal(err.code, 504);
      await waitForLog(t, bot.botId, since, /action "loopAfterAwait" failed \(timeout\)/, 'error');
      await stillWorking();
    });

    test('a thrown error: 400 Runtime whose message holds the error, logged', async () => {
      const since = new Date().toISOString();
      const err = await failing('boom', RuntimeError, /boom/);
      assert.equal(err.code, 400);
      assert.equal(err.type, 'Runtime');
      await waitForLog(t, bot.botId, since, /action "boom" failed \(runtime\): Error: boom/, 'error');
      await stillWorking();
    });

    test('a rejected promise: 400 Runtime, logged', async () => {
      const since = new Date().toISOString();
      const err = await failing('nope', RuntimeError, /nope/);
      assert.equal(err.code, 400);
      await waitForLog(t, bot.botId, since, /action "nope" failed \(runtime\): Error: nope/, 'error');
      await stillWorking();
    });

    test('a memory bomb: 400 Runtime naming the memory limit, logged, recovered from', async () => {
      const since = new Date().toISOString();
      const err = await failing('bomb', RuntimeError, /memory limit of 32 MB/);
      assert.equal(err.code, 400);
      await waitForLog(t, bot.botId, since, /action "bomb" failed \(memory\)/, 'error');
      await stillWorking();
    });

    test('infinite recursion: 400 Runtime (stack overflow), logged', async () => {
      const since = new Date().toISOString();
      const err = await failing('recursion', RuntimeError, /call stack/i);
      assert.equal(err.code, 400);
      await waitForLog(t, bot.botId, since, /action "recursion" failed \(runtime\): RangeError/, 'error');
      await stillWorking();
    });

    test('this.constructor.constructor("return process")(): no host process, a Runtime error', async () => {
      const since = new Date().toISOString();
      const err = await failing('ctorEscape', RuntimeError, /process is not defined/);
      assert.equal(err.code, 400);
      await waitForLog(
        t,
        bot.botId,
        since,
        /action "ctorEscape" failed \(runtime\): ReferenceError/,
        'error',
      );
      await stillWorking();
    });

    test('typeof process and typeof require are "undefined" in bot code', async () => {
      const proc = await bot.client.callAction({ type: 'typeofProcess', input: {} });
      // A value that is not an object comes back as { value }.
      assert.deepEqual(proc.output, { value: 'undefined' });
      const req = await bot.client.callAction({ type: 'typeofRequire', input: {} });
      assert.deepEqual(req.output, { global: 'undefined', fn: 'undefined' });
      await stillWorking();
    });

    test('host objects are out of reach through client, console, actions and the call stack', async () => {
      const res = await bot.client.callAction({ type: 'hostEscape', input: {} });
      const output = res.output as Record<string, unknown>;
      assert.equal(output.client, 'undefined');
      assert.equal(output.console, 'undefined');
      assert.equal(output.actions, 'undefined');
      assert.ok(
        output.caller === 'refused' || output.caller === 'null',
        `the caller chain stops at the unit (got ${String(output.caller)})`,
      );
      await stillWorking();
    });

    test('no WebAssembly in bot code: its memory would escape the isolate’s limit', async () => {
      const res = await bot.client.callAction({ type: 'typeofWebAssembly', input: {} });
      assert.deepEqual(res.output, { type: 'undefined' });
    });

    test('nested action calls: bounded in depth, in number, and ended with their caller', async () => {
      const deep = await bot.client.callAction({ type: 'deep', input: {} });
      const output = deep.output as { stopped: number; message: string };
      assert.equal(output.stopped, 8, 'the eighth nested call may not call a ninth');
      assert.match(output.message, /at most 8 deep/);

      const since = new Date().toISOString();
      const started = Date.now();
      const fan = await bot.client.callAction({ type: 'fan', input: {} });
      assert.deepEqual(fan.output, { d: 0 });
      await stillWorking();
      // What the storm started settles: count what ran once nothing more runs.
      let ran = -1;
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const now = (await logsSince(t, bot.botId, since)).filter((l) => /^fan \d+$/.test(l.message)).length;
        if (now === ran) break;
        ran = now;
      }
      console.log(
        `the fan-out ran ${ran} action calls in ${Date.now() - started} ms (printed, not asserted)`,
      );
      assert.ok(ran >= 1 && ran <= 101, `at most the call and 100 nested ones ran (${ran})`);
      assert.ok(Date.now() - started < 15_000, 'the storm ended soon');
    });

    test('a noisy call keeps at most 16,000 characters of log lines, and says it dropped the rest', async () => {
      const since = new Date().toISOString();
      await bot.client.callAction({ type: 'noisy', input: {} });
      await waitForLog(t, bot.botId, since, /were dropped/, 'warn');
      const lines = (await logsSince(t, bot.botId, since)).filter((l) => /^z+…?$/.test(l.message));
      const chars = lines.reduce((sum, l) => sum + l.message.length, 0);
      assert.ok(
        lines.length >= 8 && chars <= 16_000 + lines.length,
        `${lines.length} lines, ${chars} characters`,
      );
    });

    test('while one bot loops, another bot still answers', async () => {
      const looping = bot.client.callAction({ type: 'loop', input: {} }).then(
        () => 'answered',
        (err: unknown) => (isApiError(err) ? err.type : 'other'),
      );
      let settled = false;
      void looping.then(() => (settled = true));
      const text = `during the loop ${++echoes}`;
      await send(echoChat, text);
      const all = await waitForReplies(echo, echoChat, echoes);
      assert.equal(all.at(-1), `echo: ${text}`);
      assert.equal(settled, false, 'the other bot answered while the loop still ran');
      assert.equal(await looping, 'OperationTimeout');
      await stillWorking();
    });

    test('a code card that loops forever fails its turn, is logged, and the next message is answered', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const failed = await sendAndWait(bot, c, 'loop');
      assert.equal(failed.status, 'failed', 'the turn failed');
      assert.match(
        failed.failureReason ?? '',
        /code card 0 of node "reply" in workflow "main" failed \(timeout\)/,
      );
      await waitForLog(
        t,
        bot.botId,
        since,
        new RegExp(`The turn of event ${failed.id} \\(message_created\\) failed`),
        'error',
      );
      assert.deepEqual(
        await replies(bot, c),
        [DEFAULT_FALLBACK_TEXT],
        'only the fallback message answers the message whose turn failed',
      );
      const next = await sendAndWait(bot, c, 'hello again');
      assert.equal(next.status, 'processed', `the next turn: ${next.failureReason}`);
      assert.deepEqual(await waitForReplies(bot, c, 2), [DEFAULT_FALLBACK_TEXT, 'ok: hello again']);
      await stillWorking();
    });

    test('a turn that fails for good leaves a dialog the next message starts over from', async () => {
      const asker = await deployPackage(t, askerBot());
      const c = await startChat(asker);
      await sendAndWait(asker, c, 'hi');
      assert.deepEqual(await waitForReplies(asker, c, 1), ['Your name?']);
      const failed = await sendAndWait(asker, c, 'boom');
      assert.equal(failed.status, 'failed', 'the code card threw');
      // Not taken as the answer to the question of the failed turn: the dialog starts over and asks again.
      const next = await sendAndWait(asker, c, 'Ada');
      assert.equal(next.status, 'processed', `the next turn: ${next.failureReason}`);
      assert.deepEqual(await waitForReplies(asker, c, 3), [
        'Your name?',
        DEFAULT_FALLBACK_TEXT,
        'Your name?',
      ]);
    });

    test('the server still answers after all that', async () => {
      const res = await fetch(`${t.url}/healthz`);
      assert.equal(res.status, 200);
      await stillWorking();
    });
  });
}
