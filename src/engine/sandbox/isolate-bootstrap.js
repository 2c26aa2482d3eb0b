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
  const { entries, getPrototypeOf, keys } = Object;
  const { isArray } = Array;
  const Bytes = Uint8Array;
  const Buffer = ArrayBuffer;
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
    'fetch',
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

  // fetch, as bot code knows it from browsers and Node, for what bots do with it (call an API, read
  // JSON or bytes): the host makes the request, under the operator's address policy and its limits, and
  // answers with the whole body. The isolate has no network, no TextEncoder and no atob: the few
  // conversions a body needs are here.
  const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

  function toBase64(bytes) {
    let out = '';
    for (let i = 0; i < bytes.length; i += 3) {
      const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
      out += BASE64[(n >> 18) & 63] + BASE64[(n >> 12) & 63];
      out += i + 1 < bytes.length ? BASE64[(n >> 6) & 63] : '=';
      out += i + 2 < bytes.length ? BASE64[n & 63] : '=';
    }
    return out;
  }

  function fromBase64(text) {
    const bytes = new Bytes(Math.floor((text.replace(/=+$/, '').length * 3) / 4));
    let value = 0;
    let bits = 0;
    let j = 0;
    for (const ch of text) {
      const digit = BASE64.indexOf(ch);
      if (digit < 0) continue;
      value = ((value << 6) | digit) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes[j++] = (value >> bits) & 255;
      }
    }
    return bytes;
  }

  function utf8(text) {
    const out = [];
    for (const ch of text) {
      const c = ch.codePointAt(0);
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return new Bytes(out);
  }

  /** `init.headers` as [name, value] pairs: an object, pairs, or a Response's headers. */
  function headerPairs(headers) {
    if (headers === undefined || headers === null) return [];
    if (isArray(headers)) return headers.map((pair) => [String(pair[0]), String(pair[1])]);
    if (typeof headers.forEach === 'function' && typeof headers.get === 'function') {
      const pairs = [];
      headers.forEach((value, name) => pairs.push([String(name), String(value)]));
      return pairs;
    }
    return keys(headers).map((name) => [name, String(headers[name])]);
  }

  function headersOf(pairs) {
    const list = pairs.map((pair) => [String(pair[0]).toLowerCase(), String(pair[1])]);
    const values = (name) =>
      list.filter((pair) => pair[0] === String(name).toLowerCase()).map((pair) => pair[1]);
    return {
      get: (name) => (values(name).length > 0 ? values(name).join(', ') : null),
      has: (name) => values(name).length > 0,
      forEach: (fn) => list.forEach((pair) => fn(pair[1], pair[0])),
      entries: () => list.map((pair) => [pair[0], pair[1]])[Symbol.iterator](),
      [Symbol.iterator]: () => list.map((pair) => [pair[0], pair[1]])[Symbol.iterator](),
    };
  }

  /** The host of a URL, as the logs show it (never its path or query, which may hold a key). */
  function hostOf(url) {
    const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?([^/?#]*)/i.exec(url);
    return match ? match[1] : '(no host)';
  }

  function fetchFor(callId) {
    const log = consoleFor(callId);
    return async (input, init) => {
      const options = init ?? {};
      const url =
        typeof input === 'string' ? input : input && typeof input.url === 'string' ? input.url : undefined;
      if (url === undefined) throw new TypeError('fetch needs a URL');
      const method = options.method === undefined ? 'GET' : String(options.method).toUpperCase();
      const asked = { url, method, headers: headerPairs(options.headers) };
      const body = options.body;
      if (typeof body === 'string') asked.text = body;
      else if (body instanceof Bytes) asked.base64 = toBase64(body);
      else if (body instanceof Buffer) asked.base64 = toBase64(new Bytes(body));
      else if (body !== undefined && body !== null)
        throw new TypeError(
          'fetch: a body is a string, a Uint8Array or an ArrayBuffer (JSON.stringify an object)',
        );
      let answer;
      try {
        answer = await request(callId, { target: 'fetch', request: asked });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        log.warn(`fetch ${method} ${hostOf(url)} failed: ${message}`);
        throw new TypeError(message);
      }
      log.info(`fetch ${method} ${hostOf(url)}: ${answer.status} in ${answer.durationMs} ms`);
      const bytes = () => (answer.base64 !== undefined ? fromBase64(answer.base64) : utf8(answer.text));
      let used = false;
      const read = () => {
        if (used) throw new TypeError('fetch: the body was read already');
        used = true;
      };
      return {
        ok: answer.status >= 200 && answer.status < 300,
        status: answer.status,
        statusText: answer.statusText,
        url: answer.url,
        redirected: answer.redirected,
        headers: headersOf(answer.headers),
        get bodyUsed() {
          return used;
        },
        text: async () => (read(), answer.text),
        json: async () => (read(), parse(answer.text)),
        arrayBuffer: async () => (read(), bytes().buffer),
        bytes: async () => (read(), bytes()),
      };
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
        fetchFor(callId),
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
