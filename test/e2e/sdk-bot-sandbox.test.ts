// What an attacker with a developer's token deploys as an SDK bot, and what comes of it: every attempt to
// reach the host, the server or another tenant is refused or contained by the OS sandbox, and the server
// and another tenant's bot go on answering. On both stores (on PostgreSQL with Redis too, when there is
// one: the services a bot tried to reach).
import assert from 'node:assert/strict';
import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@botpress/client';
import { chatUrlOf } from '../helpers/bp-cli.ts';
import { ChatSession, turnOutcome } from '../helpers/chat-bots.ts';
import { waitForLog } from '../helpers/deployed-bots.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { chatBundle } from '../helpers/sdk-bundles.ts';
import { runParley } from '../helpers/process.ts';
import type { ParleyProcess } from '../helpers/process.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';
import { startReceiver } from '../helpers/webhooks.ts';
import type { WebhookReceiver } from '../helpers/webhooks.ts';
import { freePort } from '../helpers/ports.ts';

const noSandbox = await sandboxSkip();
/** The unprivileged user of Debian and most systems. */
const NOBODY = 65534;
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisAnswers = await new Promise<boolean>((resolve) => {
  const socket = net.connect(6379, '127.0.0.1', () => {
    socket.destroy();
    resolve(true);
  });
  socket.on('error', () => resolve(false));
});

/** A port nothing listens on here (bound, then let go). */
/** What a TCP connection from this process (the host) to 127.0.0.1:port comes to. */
function connectFromHost(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

for (const store of await testStores()) {
  describe(
    `SDK bots cannot touch the host or another tenant (${store.name})`,
    { skip: store.skip ?? noSandbox },
    () => {
      let t: TestServer;
      let receiver: WebhookReceiver;
      let serverPort: number;
      const sessions: ChatSession[] = [];
      /** Another tenant's bot, in a workspace of its own, asked after each attack. */
      let bystander: ChatSession;

      before(async () => {
        receiver = await startReceiver();
        const receiverPort = new URL(receiver.url).port;
        t = await startTestServer(store, {
          sdkBotTimeoutSeconds: '3',
          sdkBotMemoryMb: '160',
          // The one private address bots may reach: the test's receiver.
          sdkBotPrivateTargets: `127.0.0.1:${receiverPort}`,
          ...(store.name === 'postgres' && redisAnswers && { redisUrl }),
        });
        serverPort = Number(new URL(t.url).port);
        const workspace = await t.client().createWorkspace({ name: 'bystanders' });
        const other = t.client({ workspaceId: workspace.id });
        const { bot } = await other.createBot({
          name: 'bystander',
          code: chatBundle(`await reply('still: ' + text);`),
        });
        const chat = (await other.getBot({ id: bot.id })).bot.integrations.chat;
        assert.ok(chat?.webhookUrl);
        bystander = await ChatSession.open(chat.webhookUrl);
        sessions.push(bystander);
      });
      after(async () => {
        for (const s of sessions) await s.close();
        await t?.close();
        await receiver?.close();
      });

      const deploy = async (name: string, code: string, extra: Parameters<Client['createBot']>[0] = {}) => {
        const { bot } = await t.client().createBot({ name, code, ...extra });
        const session = await ChatSession.open(await chatUrlOf(t, bot.id));
        sessions.push(session);
        return { botId: bot.id, session, runtime: (): Client => t.client({ botId: bot.id }) };
      };

      /** The server answers, and so does the other tenant's bot. */
      const unharmed = async (label: string) => {
        assert.equal((await fetch(`${t.url}/healthz`)).status, 200, `${label}: /healthz`);
        await bystander.say(label);
        assert.deepEqual(
          await bystander.nextTexts(1, 20_000),
          [`still: ${label}`],
          `${label}: the other tenant`,
        );
      };

      test('a bot that kills its parent and signals the server runs as a user of its own and signals nothing', async () => {
        const { session } = await deploy(
          'killer',
          chatBundle(`
          const outcome = (f) => { try { f(); return 'sent'; } catch (e) { return e.code; } };
          await reply([
            'uid:' + (process.getuid() >= 1900000000 ? 'sandbox' : process.getuid()),
            'ppid:' + process.ppid,
            'kill-parent:' + outcome(() => process.kill(process.ppid, 'SIGKILL')),
            'kill-server:' + outcome(() => process.kill(Number(text), 'SIGKILL')),
            'kill-all:' + outcome(() => process.kill(-1, 'SIGKILL')),
          ].join(' '));`),
        );
        await session.say(String(process.pid));
        // The parent it sees is its sandbox's init, another user's; the server's pid names no process it
        // can see; -1 reaches none.
        assert.deepEqual(await session.nextTexts(1, 20_000), [
          'uid:sandbox ppid:1 kill-parent:EPERM kill-server:ESRCH kill-all:ESRCH',
        ]);
        await unharmed('after the killer');
      });

      test('a bot that connects to the host’s services (PostgreSQL, Redis, the server’s port) reaches none of them', async () => {
        const since = new Date().toISOString();
        const { botId, session } = await deploy(
          'prober',
          chatBundle(`
          const tcp = (port) => new Promise((resolve) => {
            const s = require('node:net').connect(port, '127.0.0.1', () => { s.destroy(); resolve('connected'); });
            s.on('error', (e) => resolve(e.code));
          });
          const http = async (url) => {
            try { const r = await fetch(url); return String(r.status); } catch (e) { return 'failed(' + (e.cause?.message ?? e.message) + ')'; }
          };
          const [serverPort] = text.split(' ').map(Number);
          await reply([
            'pg:' + await tcp(5432),
            'redis:' + await tcp(6379),
            'server:' + await tcp(serverPort),
            'proxied-pg:' + await http('http://127.0.0.1:5432/'),
            'proxied-mapped:' + await http('http://[::ffff:127.0.0.1]:6379/'),
            'metadata:' + await http('http://169.254.169.254/latest/meta-data/'),
            'private:' + await http('http://10.1.2.3/'),
            'metrics:' + await http('http://127.0.0.1:' + serverPort + '/metrics'),
            'api-metrics:' + await http(process.env.BP_API_URL + '/metrics'),
            'own-api:' + await http('http://127.0.0.1:' + serverPort + '/v1/chat/users'),
          ].join(' '));`),
        );
        await session.say(String(serverPort));
        const [answer = ''] = await session.nextTexts(1, 20_000);
        const outcomes = new Map(
          answer.split(' ').map((part) => [part.split(':')[0], part.slice(part.indexOf(':') + 1)]),
        );
        // Its network namespace has only its own loopback: nothing of the host's listens there. This
        // server's own URLs lead to its API, where only what bot code calls answers.
        const direct = {
          pg: 'ECONNREFUSED',
          redis: 'ECONNREFUSED',
          server: 'ECONNREFUSED',
          metrics: '404',
          'api-metrics': '404',
          'own-api': '401',
        };
        for (const [name, expected] of Object.entries(direct))
          assert.equal(outcomes.get(name), expected, `${name}: ${answer}`);
        // Through the egress proxy: refused (the fetch fails), with the reason in the bot's logs.
        for (const name of ['proxied-pg', 'proxied-mapped', 'metadata', 'private'])
          assert.match(outcomes.get(name) ?? '', /^failed\(/, `${name}: ${answer}`);
        for (const target of ['127.0.0.1:5432', '[::ffff:7f00:1]:6379', '169.254.169.254:80', '10.1.2.3:80'])
          await waitForLog(
            t,
            botId,
            since,
            new RegExp(
              `a connection to ${target.replace(/[.[\]]/g, '\\$&')} was refused: not a public address`,
            ),
            'warn',
          );
        await unharmed('after the prober');
      });

      test('a bot reaches an allowed private target with fetch, the http module and a client that speaks to the proxy', async () => {
        const { session } = await deploy(
          'caller',
          chatBundle(`
            const http = require('node:http');
            const get = (options) => new Promise((resolve) => {
              const req = http.request(options, (res) => { res.resume(); res.on('end', () => resolve(String(res.statusCode))); });
              req.on('error', (e) => resolve(e.code ?? e.message));
              req.end();
            });
            const proxy = new URL(process.env.HTTP_PROXY);
            await reply([
              'fetch:' + (await fetch(text + '/by-fetch')).status,
              'http:' + await get(text + '/by-http'),
              // What axios does with HTTP_PROXY: the absolute URL, sent to the proxy (through the default agent).
              'absolute:' + await get({ host: proxy.hostname, port: proxy.port, path: text + '/by-absolute-form' }),
            ].join(' '));`),
        );
        await session.say(receiver.url);
        assert.deepEqual(await session.nextTexts(1, 20_000), ['fetch:200 http:200 absolute:200']);
        const paths = receiver.received.map((r) => r.path);
        for (const path of ['/by-fetch', '/by-http', '/by-absolute-form'])
          assert.ok(paths.includes(path), path);
      });

      test('a bot that leaves a kept-alive connection to the API behind at every call goes on calling it', async () => {
        // What an SDK bot does: a client, with an agent that keeps its connections, made for each event.
        // Each one left open would hold three of its sandbox's descriptors (512) and one of the server's
        // connections from its address (256): past 170 of them, its calls failed with EMFILE.
        const { session, botId } = await deploy(
          'churner',
          chatBundle(`
            const http = require('node:http');
            const call = () => new Promise((resolve) => {
              const req = http.get(process.env.BP_API_URL + '/v1/chat/users/' + encodeURIComponent(text), {
                agent: new http.Agent({ keepAlive: true }),
                headers: { authorization: 'Bearer ' + process.env.BP_TOKEN, 'x-bot-id': process.env.BP_BOT_ID },
              }, (res) => { res.resume(); res.on('end', () => resolve(String(res.statusCode))); });
              req.on('error', (e) => resolve(e.code ?? e.message));
            });
            const outcomes = {};
            for (let batch = 0; batch < 20; batch++) {
              for (const outcome of await Promise.all(Array.from({ length: 10 }, call)))
                outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
            }
            await reply(JSON.stringify(outcomes));`),
        );
        const { user } = await t.client({ botId }).createUser({ tags: {} });
        await session.say(user.id);
        assert.deepEqual(await session.nextTexts(1, 60_000), [JSON.stringify({ 200: 200 })]);
      });

      test('a bot that opens connections to the API without end holds at most 64 of them', async () => {
        const { session } = await deploy(
          'hoarder',
          chatBundle(`
            const net = require('node:net');
            const api = new URL(process.env.BP_API_URL);
            const sockets = Array.from({ length: 100 }, () => {
              const socket = net.connect(Number(api.port), api.hostname);
              socket.on('error', () => {});
              return socket;
            });
            await new Promise((resolve) => setTimeout(resolve, 1000));
            const open = sockets.filter((s) => !s.closed).length;
            for (const s of sockets) s.destroy();
            // Its reply is a connection too: once the server has seen these close.
            await new Promise((resolve) => setTimeout(resolve, 200));
            await reply('open: ' + open);`),
        );
        await session.say('go');
        assert.deepEqual(await session.nextTexts(1, 20_000), ['open: 64']);
        await unharmed('after the hoarder');
      });

      test('a bot that listens on a port and binds UDP is reached by nothing outside its sandbox', async () => {
        const port = await freePort();
        const { session } = await deploy(
          'listener',
          chatBundle(`
          const port = Number(text);
          await new Promise((resolve, reject) => {
            const server = require('node:net').createServer((s) => s.end('hello from the bot'));
            server.on('error', reject);
            server.listen(port, '0.0.0.0', resolve);
          });
          const udp = require('node:dgram').createSocket('udp4');
          await new Promise((resolve) => udp.bind(port, resolve));
          await reply('listening on ' + port);`),
        );
        await session.say(String(port));
        assert.deepEqual(await session.nextTexts(1, 20_000), [`listening on ${port}`]);
        assert.equal(await connectFromHost(port), 'ECONNREFUSED', 'its port is its own network namespace’s');
      });

      test('a bot that writes trace files, sets V8 flags and reads its own report harms only itself', async () => {
        const before = await readdir(process.cwd());
        const { session } = await deploy(
          'tracer',
          chatBundle(`
          const outcome = (f) => { try { return String(f()); } catch (e) { return e.code ?? e.message; } };
          const tracing = outcome(() => { require('node:trace_events').createTracing({ categories: ['v8', 'node'] }).enable(); return 'on'; });
          for (let i = 0; i < 2000; i++) JSON.parse(JSON.stringify({ i, text: 'x'.repeat(1000) }));
          const flags = outcome(() => { require('node:v8').setFlagsFromString('--allow-natives-syntax'); return 'set'; });
          const env = Object.keys(process.report.getReport().environmentVariables).sort().join(',');
          await reply('tracing:' + tracing + ' flags:' + flags + ' env:' + env);`),
        );
        await session.say('trace');
        const [answer] = await session.nextTexts(1, 20_000);
        assert.match(
          answer ?? '',
          /^tracing:\S+ flags:\S+ env:BP_API_URL,BP_BOT_ID,BP_TOKEN,BP_WORKSPACE_ID,HTTPS_PROXY,HTTP_PROXY,NO_PROXY,/,
        );
        assert.doesNotMatch(
          answer ?? '',
          /DATABASE|REDIS|PARLEY|HOME|PATH/,
          'nothing of the server’s environment',
        );
        await sleep(500);
        const traces = (await readdir(process.cwd())).filter(
          (f) => !before.includes(f) && f.startsWith('node_trace'),
        );
        assert.deepEqual(traces, [], 'no trace file in the server’s working directory');
        await unharmed('after the tracer');
      });

      test('a bot that spins with no call in flight is held to its CPU share, then stopped', async () => {
        const since = new Date().toISOString();
        const { botId, session } = await deploy(
          'spinner',
          chatBundle(`await reply('spinning'); setImmediate(() => { for (;;) {} });`),
        );
        await session.say('spin');
        assert.deepEqual(await session.nextTexts(1, 20_000), ['spinning']);
        // Meanwhile the server and the other tenant answer (the spinner holds at most half a core).
        await unharmed('while the spinner spins');
        await waitForLog(t, botId, since, /with no call in flight/, 'error', 30_000);
      });

      test('a bot whose maxExecutionTime is the largest there is still stops at the operator’s limit', async () => {
        const { session, runtime } = await deploy('sleeper', chatBundle(`await new Promise(() => {});`), {
          maxExecutionTime: 2_147_483_647,
        });
        const started = Date.now();
        const message = await session.say('sleep');
        const outcome = await turnOutcome(runtime(), message, 30_000);
        assert.equal(outcome.status, 'failed');
        assert.match(outcome.failureReason ?? '', /did not answer within 3 s/);
        assert.ok(Date.now() - started < 25_000, 'the operator’s 3 s, not the bot’s 68 years');
      });

      test('a bot deleted while it runs has its process stopped at once', async () => {
        const before = receiver.received.length;
        const { botId, session } = await deploy(
          'beater',
          chatBundle(`
          setInterval(() => { fetch(text).catch(() => {}); }, 100);
          await reply('beating');`),
        );
        await session.say(`${receiver.url}/beat`);
        assert.deepEqual(await session.nextTexts(1, 20_000), ['beating']);
        await sleep(1000);
        assert.ok(receiver.received.length - before >= 3, 'its beats reach the allowed private target');
        await t.client().deleteBot({ id: botId });
        await sleep(1000);
        const afterDelete = receiver.received.length;
        await sleep(1500);
        assert.equal(receiver.received.length, afterDelete, 'no beat a second after the delete');
      });
    },
  );
}

describe('a server that cannot sandbox bots refuses them and says why', { skip: noSandbox }, () => {
  let dataDir: string;
  let server: ParleyProcess | undefined;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'parley-unsandboxed-'));
    await chown(dataDir, NOBODY, NOBODY);
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    await rm(dataDir, { recursive: true, force: true });
  });

  test('started as an unprivileged user: its log says why at start, and a deploy is refused naming the field', async () => {
    const token = `bp_pat_${'u'.repeat(43)}`;
    server = runParley(
      ['serve', '--port', '0', '--data-dir', dataDir],
      { PARLEY_ADMIN_TOKEN: token },
      {
        // Another user than root, still able to read the clone wherever it lies (its folders may be root's).
        prefix: [
          '/usr/bin/setpriv',
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          '--clear-groups',
          '--inh-caps=+dac_read_search',
          '--ambient-caps=+dac_read_search',
        ],
      },
    );
    const [, url = ''] = await server.waitFor(
      /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"Parley is listening"/,
    );
    const [, workspaceId = ''] = await server.waitFor(/workspace id: (\S+)/);
    await server.waitFor(/SDK bots and integrations will not run here: the server must start as root/);
    const client = new Client({ apiUrl: url, token, workspaceId });
    await assert.rejects(
      client.createBot({ name: 'refused', code: chatBundle(`await reply(text);`) }),
      (err: { type?: string; message?: string }) => {
        assert.equal(err.type, 'InvalidPayload');
        assert.match(
          err.message ?? '',
          /^code: bundles built by `bp build` cannot run on this server: the server must start as root/,
        );
        return true;
      },
    );
    const { bot } = await client.createBot({ name: 'not yet' });
    await assert.rejects(
      client.updateBot({ id: bot.id, code: chatBundle(`await reply(text);`) }),
      /cannot run on this server/,
    );
    assert.equal((await client.listBots({})).bots.length, 1, 'nothing was deployed');
  });
});
