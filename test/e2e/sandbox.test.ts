// The bot-code sandbox: isolated-vm isolates in a supervised child process, driven through the
// Sandbox interface only. Failure cases check that only the failing call fails: the same program's
// next call and another bot's call still work afterwards.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ProcessSandbox } from '../../src/engine/sandbox/pool.ts';
import type { SandboxLogger } from '../../src/engine/sandbox/pool.ts';
import type {
  BotProgram,
  CallContext,
  CallOutcome,
  FailureKind,
  HostCall,
  HostHandler,
  Json,
} from '../../src/engine/sandbox/types.ts';

const LIMITS = { memoryMb: 64, timeoutMs: 300 };

const botA: BotProgram = {
  versionId: 'ver_a1',
  botId: 'bot_a',
  limits: LIMITS,
  units: {
    ping: 'return "pong"',
    counter: 'globalThis.count = (globalThis.count ?? 0) + 1; return globalThis.count',
    echo: 'return { name: event.name, env: env.MODE, input, message: message ?? null }',
    mutate: `
      workflow.step = 2;
      delete workflow.old;
      conversation.count = (conversation.count ?? 0) + 1;
      user.name = event.name;
      bot.seen = true;
      turn.list = [1, 2];
      return 42;`,
    clientCall: 'const answer = await client.someOp({ x: 1 }); return { answer }',
    actionCall: 'return await actions.chat.sendEvent({ type: "typing" })',
    hostRejects: `
      try { await client.fails({}); return 'not caught'; }
      catch (error) { return { isError: error instanceof Error, message: error.message }; }`,
    nonJsonArgs: 'try { await client.x({ n: 1n }); } catch (error) { return error.name; }',
    double: 'const answer = await client.echo({ n: input }); return answer.n * 2',
    logs: `
      console.log('hello', { a: 1 });
      console.warn('careful');
      console.error(new Error('bad'));
      console.debug(1, 2);
      console.info('x'.repeat(5000));
      return null;`,
    noisy: 'for (let i = 0; i < 100; i++) console.log("z".repeat(1900)); return null',
    manyLogs: 'for (let i = 0; i < 500; i++) console.log("line " + i); return null',
    loop: 'while (true) {}',
    loopAfterAwait: 'console.log("before"); await client.x(); while (true) {}',
    throws: 'throw new Error("boom")',
    rejects: 'await Promise.reject(new Error("x"))',
    recursion: 'function f() { return f() + 1; } return f()',
    bigint: 'return 10n',
    func: 'return () => 1',
    // The variables come back as JSON: a toJSON that turns a scope into a number must not pass as one.
    scopeToJson: 'workflow.toJSON = () => 5; return 1',
    syntaxError: 'return (',
    hang: 'await client.hang(); return "never"',
    ctorEscape: "return this.constructor.constructor('return process')()",
    fnCtorEscape: "return (function () {}).constructor('return process')()",
    bridgeEscape: `return [
      client.anything.constructor('return typeof process')(),
      console.log.constructor('return typeof require')(),
      actions.a.b.constructor('return typeof globalThis.process')(),
    ]`,
    // Climbing the call stack to the sandbox's own functions: V8 refuses past the unit's async function.
    callerEscape: 'function f() { return f.caller.caller; } return String(f())',
    globals: `return {
      process: typeof process,
      require: typeof require,
      globalProcess: typeof globalThis.process,
      module: typeof module,
      setTimeout: typeof setTimeout,
      fetch: typeof fetch,
      Buffer: typeof Buffer,
      WebAssembly: typeof WebAssembly,
      names: Object.getOwnPropertyNames(globalThis),
    }`,
    requireFs: "return require('fs')",
    importFs: "return await import('fs')",
  },
};

const botB: BotProgram = {
  versionId: 'ver_b1',
  botId: 'bot_b',
  limits: LIMITS,
  units: { hello: 'return "hello " + event.name' },
};

const bomb: BotProgram = {
  versionId: 'ver_c1',
  botId: 'bot_c',
  // A longer time limit, so that the memory limit is what stops the bomb.
  limits: { memoryMb: 32, timeoutMs: 5000 },
  units: {
    bomb: 'const keep = []; while (true) keep.push(new Array(1e6).fill(1.5))',
    ping: 'return "pong"',
  },
};

function context(overrides: Partial<CallContext> = {}): CallContext {
  return {
    event: { name: 'Ada' },
    workflow: {},
    conversation: {},
    user: {},
    bot: {},
    env: { MODE: 'test' },
    turn: {},
    ...overrides,
  };
}

/** Answers host calls like a small fake of the domain services, and records them. */
function fakeHost(): { calls: HostCall[]; host: HostHandler } {
  const calls: HostCall[] = [];
  const host: HostHandler = async (call) => {
    calls.push(call);
    if (call.target === 'action') return { sent: call.input };
    if (call.target === 'fetch') return { fetched: call.request };
    if (call.operation === 'fails') throw new Error('no such thing');
    if (call.operation === 'echo') {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
      return call.args;
    }
    return { got: call.args };
  };
  return { calls, host };
}

const logged: string[] = [];
const logger: SandboxLogger = {
  info: (_details, message) => logged.push(message),
  warn: (_details, message) => logged.push(message),
  error: (_details, message) => logged.push(message),
};
const sandbox = new ProcessSandbox({ logger });
after(() => sandbox.close());

function run(
  program: BotProgram,
  unit: string,
  ctx = context(),
  host = fakeHost().host,
): Promise<CallOutcome> {
  return sandbox.call(program, unit, ctx, host);
}

async function valueOf(program: BotProgram, unit: string, ctx = context()): Promise<Json> {
  const outcome = await run(program, unit, ctx);
  assert.ok(outcome.ok, `expected ${unit} to succeed, got ${JSON.stringify(outcome)}`);
  return outcome.value;
}

/** The call fails with `kind`, and afterwards the same program and another bot still work. */
async function assertFailsAlone(
  unit: string,
  kind: FailureKind,
  message: RegExp,
  program: BotProgram = botA,
): Promise<CallOutcome> {
  const outcome = await run(program, unit);
  assert.equal(outcome.ok, false, `expected ${unit} to fail, got ${JSON.stringify(outcome)}`);
  assert.ok(!outcome.ok);
  assert.equal(outcome.kind, kind, outcome.message);
  assert.match(outcome.message, message);
  assert.ok(
    logged.some((line) => line.includes(outcome.message)),
    'the failure is logged',
  );
  assert.equal(await valueOf(program, 'ping'), 'pong');
  assert.equal(await valueOf(botB, 'hello'), 'hello Ada');
  return outcome;
}

test('returns values, and the context comes in as JSON', async () => {
  assert.equal(await valueOf(botA, 'ping'), 'pong');
  assert.deepEqual(await valueOf(botA, 'echo', context({ input: { a: [1, 'b'] }, message: 'hi' })), {
    name: 'Ada',
    env: 'test',
    input: { a: [1, 'b'] },
    message: 'hi',
  });
});

test('scope changes come back', async () => {
  const outcome = await run(
    botA,
    'mutate',
    context({ workflow: { old: true, step: 1 }, conversation: { count: 4 } }),
  );
  assert.ok(outcome.ok);
  assert.equal(outcome.value, 42);
  assert.deepEqual(outcome.scopes, {
    workflow: { step: 2 },
    conversation: { count: 5 },
    user: { name: 'Ada' },
    bot: { seen: true },
    turn: { list: [1, 2] },
  });
});

test('client and action calls reach the host handler, and the answers reach the code', async () => {
  const { calls, host } = fakeHost();
  const client = await run(botA, 'clientCall', context(), host);
  assert.ok(client.ok);
  assert.deepEqual(client.value, { answer: { got: { x: 1 } } });
  const action = await run(botA, 'actionCall', context(), host);
  assert.ok(action.ok);
  assert.deepEqual(action.value, { sent: { type: 'typing' } });
  assert.deepEqual(calls, [
    { target: 'client', operation: 'someOp', args: { x: 1 } },
    { target: 'action', alias: 'chat', action: 'sendEvent', input: { type: 'typing' } },
  ]);
});

test('a rejected host call is a catchable Error in the code; non-JSON arguments throw there', async () => {
  assert.deepEqual(await valueOf(botA, 'hostRejects'), { isError: true, message: 'no such thing' });
  assert.equal(await valueOf(botA, 'nonJsonArgs'), 'TypeError');
});

test('an answer JSON cannot encode fails its own host call only, not the answers sent with it', async () => {
  // The answers of one turn of the event loop go to the sandbox process as one message.
  const cyclic: { [key: string]: Json } = {};
  cyclic.self = cyclic;
  const host: HostHandler = async (call) => {
    if (call.target !== 'client') return null;
    return call.operation === 'fails' ? cyclic : call.args;
  };
  const inputs = Array.from({ length: 20 }, (_, i) => i);
  const [unsent, ...sent] = await Promise.all([
    run(botA, 'hostRejects', context(), host),
    ...inputs.map((n) => run(botA, 'double', context({ input: n }), host)),
  ]);
  assert.ok(unsent?.ok);
  assert.deepEqual(unsent.value, { isError: true, message: 'the host answer is not JSON' });
  assert.deepEqual(
    sent.map((outcome) => (outcome.ok ? outcome.value : outcome.message)),
    inputs.map((n) => n * 2),
  );
});

test('concurrent calls of one program with awaits stay independent', async () => {
  const inputs = Array.from({ length: 20 }, (_, i) => i);
  const outcomes = await Promise.all(inputs.map((n) => run(botA, 'double', context({ input: n }))));
  assert.deepEqual(
    outcomes.map((outcome) => (outcome.ok ? outcome.value : outcome.message)),
    inputs.map((n) => n * 2),
  );
});

test('console lines come back, capped in number and length', async () => {
  const outcome = await run(botA, 'logs');
  assert.ok(outcome.ok);
  const lines = outcome.logs.map(({ level, message }) => ({ level, message: message.slice(0, 30) }));
  assert.deepEqual(lines.slice(0, 2), [
    { level: 'info', message: 'hello {"a":1}' },
    { level: 'warn', message: 'careful' },
  ]);
  assert.equal(outcome.logs[2]?.level, 'error');
  assert.match(outcome.logs[2]?.message ?? '', /^Error: bad/);
  assert.deepEqual(lines[3], { level: 'debug', message: '1 2' });
  assert.ok((outcome.logs[4]?.message.length ?? 0) <= 2001);
  assert.ok(outcome.logs.every((line) => !Number.isNaN(Date.parse(line.time))));

  const many = await run(botA, 'manyLogs');
  assert.equal(many.logs.length, 101);
  assert.equal(many.logs[99]?.message, 'line 99');
  assert.match(many.logs[100]?.message ?? '', /dropped/);
});

test('the isolate stays warm between calls', async () => {
  const first = await valueOf(botA, 'counter');
  assert.equal(await valueOf(botA, 'counter'), Number(first) + 1);
});

test('an infinite loop times out', async () => {
  await assertFailsAlone('loop', 'timeout', /time limit of 300 ms/);
});

test('a loop after an await is caught by the watchdog, and the isolate is recreated', async () => {
  const outcome = await assertFailsAlone('loopAfterAwait', 'timeout', /time limit of 300 ms/);
  assert.deepEqual(
    outcome.logs.map((line) => line.message),
    ['before'],
  );
  // A fresh isolate: the global counter starts over.
  assert.equal(await valueOf(botA, 'counter'), 1);
});

test('a call of the same bot in flight when its isolate is disposed fails as collateral', async () => {
  const hanging: HostHandler = (call) =>
    call.target === 'client' && call.operation === 'hang'
      ? new Promise<Json>(() => undefined)
      : Promise.resolve(null);
  const [looping, waiting] = await Promise.all([
    run(botA, 'loopAfterAwait', context(), hanging),
    run(botA, 'hang', context(), hanging),
  ]);
  assert.ok(!looping.ok && !waiting.ok);
  assert.equal(looping.kind, 'timeout');
  assert.equal(waiting.kind, 'crash');
  assert.match(waiting.message, /another call of this bot version failed \(timeout/);
  assert.equal(await valueOf(botA, 'ping'), 'pong');
});

test('a looping bot does not hold up another bot', async () => {
  const finished: string[] = [];
  await Promise.all([
    run(botA, 'loop').then(() => finished.push('loop')),
    run(botB, 'hello').then(() => finished.push('hello')),
  ]);
  assert.deepEqual(finished, ['hello', 'loop']);
});

test('a memory bomb is stopped by the memory limit', async () => {
  await assertFailsAlone('bomb', 'memory', /memory limit of 32 MB/, bomb);
});

test('thrown errors and rejections fail with their message', async () => {
  await assertFailsAlone('throws', 'runtime', /^Error: boom$/);
  await assertFailsAlone('rejects', 'runtime', /^Error: x$/);
});

test('infinite recursion fails with a stack overflow', async () => {
  await assertFailsAlone('recursion', 'runtime', /RangeError: Maximum call stack size exceeded/);
});

test('values that are not JSON, syntax errors and unknown units fail the call', async () => {
  await assertFailsAlone('bigint', 'runtime', /BigInt/);
  await assertFailsAlone('func', 'runtime', /not JSON/);
  await assertFailsAlone('scopeToJson', 'runtime', /the workflow variables are not an object/);
  await assertFailsAlone('syntaxError', 'runtime', /^SyntaxError/);
  await assertFailsAlone('nope', 'runtime', /no code unit "nope"/);
});

test('the code cannot reach the host', async () => {
  await assertFailsAlone('ctorEscape', 'runtime', /^ReferenceError: process is not defined$/);
  await assertFailsAlone('fnCtorEscape', 'runtime', /^ReferenceError: process is not defined$/);
  await assertFailsAlone('requireFs', 'runtime', /^ReferenceError: require is not defined$/);
  await assertFailsAlone('importFs', 'runtime', /not supported/i);
  await assertFailsAlone('callerEscape', 'runtime', /^TypeError: 'caller'/);
  assert.deepEqual(await valueOf(botA, 'bridgeEscape'), ['undefined', 'undefined', 'undefined']);

  const globals = await valueOf(botA, 'globals');
  assert.ok(globals && typeof globals === 'object' && !Array.isArray(globals));
  const { names, ...types } = globals;
  assert.deepEqual(types, {
    process: 'undefined',
    require: 'undefined',
    globalProcess: 'undefined',
    module: 'undefined',
    setTimeout: 'undefined',
    // The host's fetch, a name in the unit's scope (not a global: `names` below would show it).
    fetch: 'function',
    Buffer: 'undefined',
    WebAssembly: 'undefined',
  });
  // Only the language's built-ins (and what the bot itself put there) are global.
  assert.ok(Array.isArray(names));
  const unexpected = names.filter(
    (name) => typeof name === 'string' && !/^[A-Z]/.test(name) && !BUILTIN_GLOBALS.has(name),
  );
  assert.deepEqual(unexpected, []);
});

const BUILTIN_GLOBALS = new Set([
  'globalThis',
  'count', // set by the `counter` unit
  'console', // V8's own, which prints nowhere here; units see the sandbox's console instead
  'decodeURI',
  'decodeURIComponent',
  'encodeURI',
  'encodeURIComponent',
  'escape',
  'unescape',
  'eval',
  'isFinite',
  'isNaN',
  'parseFloat',
  'parseInt',
  'undefined',
  'NaN',
  'Infinity',
]);

test('killing the sandbox process fails the call it held, and the next call works', async () => {
  let hostReached!: () => void;
  const reached = new Promise<void>((resolve) => (hostReached = resolve));
  const hanging: HostHandler = () => {
    hostReached();
    return new Promise<Json>(() => undefined);
  };
  const held = sandbox.call(botA, 'hang', context(), hanging);
  await reached;
  const pid = sandbox.pidFor(botA.versionId);
  assert.ok(pid);
  process.kill(pid, 'SIGKILL');
  const outcome = await held;
  assert.ok(!outcome.ok);
  assert.equal(outcome.kind, 'crash');
  assert.match(outcome.message, /killed by SIGKILL/);

  assert.equal(await valueOf(botA, 'ping'), 'pong');
  assert.equal(await valueOf(botB, 'hello'), 'hello Ada');
  assert.notEqual(sandbox.pidFor(botA.versionId), pid);
});

test('unload drops an isolate, and a later call loads the program again', async () => {
  assert.equal(await valueOf(botA, 'counter'), 1);
  await sandbox.unload(botA.versionId);
  assert.equal(await valueOf(botA, 'counter'), 1);
});

test('several processes: each version stays in one of them', async () => {
  const pool = new ProcessSandbox({ processes: 2 });
  try {
    const programs = Array.from({ length: 6 }, (_, i) => ({ ...botB, versionId: `ver_multi_${i}` }));
    for (const program of programs) {
      const outcome = await pool.call(program, 'hello', context(), fakeHost().host);
      assert.ok(outcome.ok);
      assert.equal(outcome.value, 'hello Ada');
    }
    assert.equal(new Set(pool.pids()).size, 2);
    assert.equal(new Set(programs.map((program) => pool.pidFor(program.versionId))).size, 2);
  } finally {
    await pool.close();
  }
  assert.deepEqual(pool.pids(), []);
});

test('a sandbox process holding more memory than allowed is stopped and restarted, whatever holds it', async () => {
  const restarts: string[] = [];
  const pool = new ProcessSandbox({
    maxMemoryMb: 300,
    logger: { ...logger, error: (_details, message) => restarts.push(message) },
  });
  try {
    // Each isolate keeps 48 MB of array buffers, within its own 64 MB: only the process's bound sees the sum.
    const holders = Array.from({ length: 10 }, (_, i) => ({
      ...botB,
      versionId: `ver_holder_${i}`,
      units: {
        hold: 'globalThis.keep = new Float64Array(6e6).fill(1.5); return keep.length',
        ping: 'return "pong"',
      },
    }));
    const outcomes: CallOutcome[] = [];
    for (const holder of holders) {
      outcomes.push(await pool.call(holder, 'hold', context(), fakeHost().host));
      if (restarts.length > 0) break;
      // The process measures itself every 50 ms.
      await new Promise((resolve) => setTimeout(resolve, 120));
    }
    // The process measures itself on a timer: on a loaded machine the end may come after the last call.
    for (let waited = 0; restarts.length === 0 && waited < 5000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(
      restarts.some((line) => /held more than 300 MB of memory/.test(line)),
      `the process was stopped for its memory (${JSON.stringify(restarts)}; ${outcomes.length} calls)`,
    );
    const after = await pool.call(holders[0]!, 'ping', context(), fakeHost().host);
    assert.ok(after.ok, JSON.stringify(after));
    assert.equal(after.value, 'pong');
  } finally {
    await pool.close();
  }
});

test('a call keeps at most 16,000 characters of log lines', async () => {
  const outcome = await run(botA, 'noisy');
  assert.ok(outcome.ok);
  const kept = outcome.logs.slice(0, -1);
  assert.ok(kept.reduce((sum, line) => sum + line.message.length, 0) <= 16_000 + kept.length);
  assert.match(outcome.logs.at(-1)?.message ?? '', /were dropped/);
});

test('warm call cost (printed, not asserted)', async () => {
  const calls = 2000;
  const host = fakeHost().host;
  for (let i = 0; i < 500; i++) await sandbox.call(botB, 'hello', context(), host); // warm up the JIT
  const started = performance.now();
  for (let i = 0; i < calls; i++) await sandbox.call(botB, 'hello', context(), host);
  const micros = ((performance.now() - started) * 1000) / calls;
  console.log(
    `sandbox: warm trivial call through the process: ${micros.toFixed(1)} µs mean over ${calls} calls`,
  );
});
