// `bp dev` against Parley: a bot of today's SDK (7.2.4, built as `bp build` does) served by a local
// process as the CLI's dev worker serves it (`default.start(port)`), its dev bot created and deployed
// as CLI 7's `bp dev` does (the replay of test/replays/cli7-dev-bot.ts, its tunnel opened with the CLI's
// own tunnel client at `<server>/dev-tunnel`). A message sent through the Chat API reaches the local
// process down the tunnel and its reply reaches the user; so does its action. Without a tunnel, a dev
// bot's `url` is called directly, only where PARLEY_DEV_BOT_PRIVATE_TARGETS allows a local address.
// Official clients, both stores; no OS sandbox needed (the bot runs in the developer's process).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { chatUrlOf } from '../helpers/bp-cli.ts';
import { ChatSession } from '../helpers/chat-bots.ts';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/runtime.ts';
import { sdkBundle } from '../helpers/sdk-versions.ts';
import type { SdkRelease } from '../helpers/sdk-versions.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';
import {
  CLI7_HEADERS,
  cli7PutBot,
  cli7CreateDevBotBody,
  cli7TunnelUrls,
  cli7UpdateDevBotBody,
  openCli7Tunnel,
} from '../replays/cli7-dev-bot.ts';
import type { Cli7Tunnel } from '../replays/cli7-dev-bot.ts';

const SDK_VERSION = '7.2.4' satisfies SdkRelease;

const BOT = `import * as sdk from '@botpress/sdk'

const bot = new sdk.Bot({
  actions: {
    shout: async ({ input }) => ({ text: String(input.text).toUpperCase() }),
  },
  plugins: {},
})

bot.on.message('*', async ({ message, client, ctx }) => {
  await client.createMessage({
    conversationId: message.conversationId,
    userId: ctx.botId,
    tags: {},
    type: 'text',
    payload: { text: 'dev says: ' + (message.payload as { text: string }).text },
  })
})

export default bot
`;

/** bot.definition.ts's `actions`, as `bp dev` sends them. */
const ACTIONS = {
  shout: {
    input: { schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    output: { schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  },
};

const code = await sdkBundle(SDK_VERSION, BOT);

/** The CLI's dev worker: the bundle's `default.start(port)`, with the API's URL and the developer's token. */
async function startWorker(
  t: TestServer,
  port: number,
): Promise<{ child: ChildProcess; stop: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-dev-bot-'));
  const file = path.join(dir, 'index.cjs');
  await writeFile(file, code);
  const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(file)}).default.start(${port})`], {
    env: { PATH: process.env.PATH ?? '', BP_API_URL: t.url, BP_TOKEN: t.token },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(
    'the dev worker to listen',
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      return res?.ok === true;
    },
    15_000,
  );
  return {
    child,
    stop: async () => {
      child.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `bp dev`'s deploy of its dev bot: createBot, then updateBot, with x-multiple-integrations. */
async function deployDevBot(t: TestServer, url: string): Promise<string> {
  const cli = t.client({ headers: CLI7_HEADERS });
  const { bot } = await cli.createBot(cli7CreateDevBotBody(url));
  const body = cli7UpdateDevBotBody(bot.id, url, { integrations: Object.keys(bot.integrations) }, ACTIONS);
  const res = await cli7PutBot(t, bot.id, body);
  const answered = (await res.json()) as { bot: { dev: boolean; url?: string } };
  assert.equal(res.status, 200, JSON.stringify(answered));
  assert.equal(answered.bot.dev, true);
  return bot.id;
}

for (const store of await testStores()) {
  describe(
    `bp dev: a dev bot served by the developer's process (${store.name})`,
    { skip: store.skip },
    () => {
      let t: TestServer;
      const sessions: ChatSession[] = [];
      const stops: (() => Promise<void> | void)[] = [];

      before(async () => {
        t = await startTestServer(store, { sdkBotTimeoutSeconds: '10' });
      });
      after(async () => {
        for (const session of sessions) await session.close();
        for (const stop of stops.reverse()) await stop();
        await t?.close();
      });

      test('through the tunnel bp dev opens: a chat message and its reply, and an action', async () => {
        const port = await freePort();
        const worker = await startWorker(t, port);
        stops.push(worker.stop);
        const tunnelId = randomUUID();
        const urls = cli7TunnelUrls(`${t.url}/dev-tunnel`, tunnelId);
        assert.equal(urls.http, `${t.url}/${tunnelId}`);
        const tunnel: Cli7Tunnel = await openCli7Tunnel(urls.ws, tunnelId, port);
        stops.push(() => tunnel.close());

        const botId = await deployDevBot(t, urls.http);
        const session = await ChatSession.open(await chatUrlOf(t, botId));
        sessions.push(session);
        await session.say('hi');
        assert.deepEqual(await session.nextTexts(1, 30_000), ['dev says: hi']);
        assert.ok(tunnel.operations.includes('event_received'), tunnel.operations.join(', '));
        // updateBot with the url is the dev bot's deploy: its handler is sent `register` too.
        await waitFor('register down the tunnel', async () => tunnel.operations.includes('register'));

        const { output } = await t.client({ botId }).callAction({ type: 'shout', input: { text: 'hey' } });
        assert.deepEqual(output, { text: 'HEY' });
      });

      test('a second tunnel of the same id is refused, as the hosted tunnel refuses it', async () => {
        const tunnelId = randomUUID();
        const urls = cli7TunnelUrls(`${t.url}/dev-tunnel`, tunnelId);
        const first = await openCli7Tunnel(urls.ws, tunnelId, 1);
        stops.push(() => first.close());
        const closed = await new Promise<number>((resolve, reject) => {
          const socket = new WebSocket(`${urls.ws}/${tunnelId}`);
          socket.on('close', (code) => resolve(code));
          socket.on('error', () => undefined);
          setTimeout(() => reject(new Error('the second tunnel stayed open')), 5000);
        });
        // @bpinternal/tunnel's CLOSE_CODES.TUNNEL_ID_CONFLICT: the CLI says the id is taken.
        assert.equal(closed, 4001);
      });

      test('without a tunnel, a local url is refused unless the operator allows it', async () => {
        const port = await freePort();
        const worker = await startWorker(t, port);
        stops.push(worker.stop);
        const botId = await deployDevBot(t, `http://127.0.0.1:${port}`);
        const session = await ChatSession.open(await chatUrlOf(t, botId));
        sessions.push(session);
        const messageId = await session.say('hi');
        // The event fails for good (an address the policy refuses): the user gets the fallback message.
        const [fallback] = await session.nextTexts(1, 30_000);
        assert.notEqual(fallback, 'dev says: hi');
        const { events } = await t.client({ botId }).listEvents({ messageId });
        const [event] = events;
        assert.equal(event?.status, 'failed');
        assert.match(event.failureReason ?? '', /PARLEY_DEV_BOT_PRIVATE_TARGETS is off/);

        await t.restart({ devBotPrivateTargets: 'on' });
        const allowed = await ChatSession.open(await chatUrlOf(t, botId));
        sessions.push(allowed);
        await allowed.say('again');
        assert.deepEqual(await allowed.nextTexts(1, 30_000), ['dev says: again']);
      });
    },
  );
}
