// Peer 1: an echo bot on Botkit 4 with its web adapter (websocket), as Botkit's own starter kit sets it
// up, except that the web server is ours and bound to 127.0.0.1 (Botkit's listens on every interface).
import http from 'node:http';
import express from 'express';
import { Botkit } from 'botkit';
import { WebAdapter } from 'botbuilder-adapter-web';

const app = express();
const server = http.createServer(app);
const adapter = new WebAdapter({});
// The adapter attaches its websocket server to Botkit's web server when the bot is ready: attach it to ours.
adapter.init = (botkit) => {
  botkit.ready(() => adapter.createSocketServer(server, {}, botkit.handleTurn.bind(botkit)));
};
const controller = new Botkit({ adapter, webserver: app, disable_console: true });

controller.on('message', async (bot, message) => {
  await bot.reply(message, `You said: ${message.text}`);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ ready: true, url: `ws://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
