// Runs INSIDE each bot isolate (not in Node), before any bot code; read as text by version-runtime.ts.
// The file is one function expression. version-runtime.ts calls it with the host bridge (two isolated-vm
// Callbacks that only accept strings and numbers) and the program's unit sources, and keeps the
// { run, settle, end } it returns as References. Nothing is put on globalThis, and the bridge lives
// only in this closure, so bot code can reach neither the bridge nor any host object.
// 'use strict' also matters for security: a strict caller is hidden from `fn.caller` and from
// structured stack traces, so bot code cannot climb from its own function up to `run`.
// eslint-disable-next-line @typescript-eslint/no-unused-expressions -- this script's value is the function
(function bootstrap(sendHostCall, sendLog, unitSources, limits) {
  'use strict';

  // WebAssembly memory lives outside the isolate's heap, where its memory limit does not count it: bot
  // code gets no WebAssembly (the sandbox process's own memory bound is the backstop for the rest).
  delete globalThis.WebAssembly;

  // Bot code may replace globals of its own isolate (JSON, Object…); the sandbox keeps the originals.
  const { parse, stringify } = JSON;
  const { entries, getPrototypeOf } = Object;
  const AsyncFunction = getPrototypeOf(async function () {}).constructor;

  // The names of types.ts a unit body sees, in this order.
  const NAMES = [
    'event',
    'workflow',
    'conversation',
    'user',
    'bot',
    'env',
    'turn',
    'input',
    'message',
    'client',
    'actions',
    'console',
  ];

  function describe(error) {
    try {
      const text =
        error instanceof Error
          ? `${error.name}: ${error.message}`
          : `Uncaught ${typeof error === 'string' ? error : (stringify(error) ?? String(error))}`;
      return text.length > limits.messageChars ? `${text.slice(0, limits.messageChars)}…` : text;
    } catch {
      return 'Uncaught exception (not printable)';
    }
  }

  // Compiled once per isolate. The AsyncFunction constructor parses exactly one function body, so
  // a unit cannot break out of its function, and a syntax error fails only that unit.
  const units = new Map();
  for (const [id, source] of entries(unitSources)) {
    try {
      units.set(id, { fn: new AsyncFunction(...NAMES, source) });
    } catch (error) {
      units.set(id, { error: describe(error) });
    }
  }

  // Calls in flight (callId -> log line count) and host calls awaiting an answer.
  const calls = new Map();
  const pending = new Map();
  let nextRequest = 0;

  function request(callId, hostCall) {
    return new Promise((resolve, reject) => {
      // Code still running after its call ended (a promise nobody awaited) gets a promise that never
      // settles: no bot code runs outside a call, where no watchdog would watch it.
      if (!calls.has(callId)) return;
      const requestId = ++nextRequest;
      // Throws (and so rejects) on arguments that are not JSON, e.g. a BigInt or a cycle.
      const text = stringify(hostCall);
      pending.set(requestId, { callId, resolve, reject });
      sendHostCall(callId, requestId, text);
    });
  }

  // A property that is not a plain name, or `then`/`toJSON`, is absent, so `await client` and
  // JSON.stringify(client) do not turn into host calls.
  function isOperationName(name) {
    return typeof name === 'string' && name !== 'then' && name !== 'toJSON';
  }

  function clientFor(callId) {
    return new Proxy(
      {},
      {
        get: (_target, operation) =>
          isOperationName(operation)
            ? (args) => request(callId, { target: 'client', operation, args })
            : undefined,
      },
    );
  }

  function actionsFor(callId) {
    const aliasProxy = (alias) =>
      new Proxy(
        {},
        {
          get: (_target, action) =>
            isOperationName(action)
              ? (input) => request(callId, { target: 'action', alias, action, input })
              : undefined,
        },
      );
    return new Proxy(
      {},
      { get: (_target, alias) => (isOperationName(alias) ? aliasProxy(alias) : undefined) },
    );
  }

  function format(value) {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.stack ?? describe(value);
    try {
      return stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  }

  function consoleFor(callId) {
    const line =
      (level) =>
      (...args) => {
        const call = calls.get(callId);
        if (!call || call.dropped) return;
        if (call.lines >= limits.logLines || call.chars >= limits.logCharsPerCall) {
          // One line past the caps, unprinted, tells the host that lines were dropped.
          call.dropped = true;
          sendLog(callId, level, '');
          return;
        }
        call.lines++;
        let text;
        try {
          text = args.map(format).join(' ');
        } catch {
          text = '[unprintable]';
        }
        const left = limits.logCharsPerCall - call.chars;
        const room = limits.logChars < left ? limits.logChars : left;
        if (text.length > room) text = `${text.slice(0, room)}…`;
        call.chars += text.length;
        sendLog(callId, level, text);
      };
    return {
      log: line('info'),
      info: line('info'),
      debug: line('debug'),
      warn: line('warn'),
      error: line('error'),
    };
  }

  function end(callId) {
    calls.delete(callId);
    for (const [requestId, entry] of pending) if (entry.callId === callId) pending.delete(requestId);
  }

  // Runs one unit; always resolves with a JSON string { ok, value, scopes } or { ok: false, message }.
  async function run(callId, unitId, contextJson) {
    calls.set(callId, { lines: 0, chars: 0, dropped: false });
    try {
      const unit = units.get(unitId);
      if (!unit) return stringify({ ok: false, message: `Error: the program has no code unit "${unitId}"` });
      if (unit.error) return stringify({ ok: false, message: unit.error });
      const c = parse(contextJson);
      const value = await unit.fn(
        c.event,
        c.workflow,
        c.conversation,
        c.user,
        c.bot,
        c.env,
        c.turn,
        c.input,
        c.message,
        clientFor(callId),
        actionsFor(callId),
        consoleFor(callId),
      );
      if (typeof value === 'function' || typeof value === 'symbol') {
        throw new TypeError(`the code returned a ${typeof value}, which is not JSON`);
      }
      const { workflow, conversation, user, bot, turn } = c;
      return stringify({
        ok: true,
        value: value ?? null,
        scopes: { workflow, conversation, user, bot, turn },
      });
    } catch (error) {
      return stringify({ ok: false, message: describe(error) });
    } finally {
      end(callId);
    }
  }

  function settle(requestId, ok, payload) {
    const entry = pending.get(requestId);
    if (!entry) return;
    pending.delete(requestId);
    if (ok) entry.resolve(parse(payload));
    else entry.reject(new Error(payload));
  }

  return { run, settle, end };
});
