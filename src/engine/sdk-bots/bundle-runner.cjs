// Entry of an SDK bot's process (started by bot-process.ts with child_process.fork, under Node's
// permission model): it loads one bundle built by `bp build` and runs each request the server sends
// over the IPC channel through the bundle's handler, as the hosted platform calls a deployed bot.
// Plain CommonJS read as is: the permission model lets this process read only this file and its
// bundle, so it can load nothing else (no tsx, no package.json to say a .js file is a module).
'use strict';
const { createRequire } = require('node:module');
const net = require('node:net');

const bundlePath = process.argv[2];

// A bot answers the server's requests; it does not listen for connections of its own. Node's permission
// model does not cover the network, so the one way to listen is closed before the bundle runs.
const refuseToListen = function listen() {
  const error = new Error('a bot may not open a server here');
  error.code = 'ERR_ACCESS_DENIED';
  throw error;
};
Object.defineProperty(net.Server.prototype, 'listen', {
  value: refuseToListen,
  writable: false,
  configurable: false,
});

function send(message) {
  if (process.connected) process.send(message);
}

function describe(error) {
  return error instanceof Error ? error.message : String(error);
}

let handler;
try {
  const bundle = createRequire(bundlePath)(bundlePath);
  handler = typeof bundle.handler === 'function' ? bundle.handler : bundle.default?.handler;
  if (typeof handler !== 'function')
    throw new Error('the bundle exports no handler (is it built by `bp build`?)');
} catch (error) {
  process.stderr.write(`the bundle failed to load: ${describe(error)}\n`);
  process.exit(78);
}

process.on('message', (message) => {
  const { id, request } = message;
  Promise.resolve()
    .then(() => handler(request))
    .then(
      (response) =>
        send({
          id,
          response: {
            status: response?.status ?? 200,
            headers: response?.headers ?? {},
            body: typeof response?.body === 'string' ? response.body : '',
          },
        }),
      // What the SDK's own server answers for a handler that throws: a 500 with the message.
      (error) =>
        send({
          id,
          response: { status: 500, headers: {}, body: JSON.stringify({ error: describe(error) }) },
        }),
    );
});
// The server's end of the channel closing means the server is gone: so is this bot.
process.on('disconnect', () => process.exit(0));
send({ ready: true });
