// Peer 2: an echo bot on the Bot Framework SDK (botbuilder 4, CloudAdapter, as in Microsoft's EchoBot
// sample), behind offline-directline, a Direct Line-style REST bridge: the client posts activities to
// the bridge and polls it for the bot's replies. Both servers bound to 127.0.0.1, in this one process.
import http from 'node:http';
import express from 'express';
import { ActivityHandler, CloudAdapter, ConfigurationBotFrameworkAuthentication } from 'botbuilder';
import directline from 'offline-directline';

class EchoBot extends ActivityHandler {
  constructor() {
    super();
    this.onMessage(async (context, next) => {
      await context.sendActivity(`You said: ${context.activity.text}`);
      await next();
    });
  }
}

// No app id or password: the local, unauthenticated setup the Bot Framework Emulator uses.
const adapter = new CloudAdapter(new ConfigurationBotFrameworkAuthentication({}));
adapter.onTurnError = async (_context, error) => {
  process.stderr.write(`bot error: ${error}\n`);
};
const bot = new EchoBot();

const botApp = express();
botApp.use(express.json());
botApp.post('/api/messages', (req, res) => adapter.process(req, res, (context) => bot.run(context)));
const botServer = http.createServer(botApp);

const bridgeApp = express();
const bridgeServer = http.createServer(bridgeApp);

const listen = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
const botPort = await listen(botServer);
const bridgePort = await listen(bridgeServer);
const bridgeUrl = `http://127.0.0.1:${bridgePort}`;
// offline-directline logs a line per new conversation: keep them out of the way (conversations are
// created before the measured window only).
const log = console.log;
console.log = (...args) => {
  if (typeof args[0] === 'string' && args[0].startsWith('Created conversation')) return;
  log(...args);
};
bridgeApp.use(directline.getRouter(bridgeUrl, `http://127.0.0.1:${botPort}/api/messages`));

process.stdout.write(`${JSON.stringify({ ready: true, url: bridgeUrl })}\n`);
process.on('SIGTERM', () => process.exit(0));
