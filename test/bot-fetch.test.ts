// `fetch` in the code of Parley bots: made by the server under the bots' address policy (nothing but
// public addresses unless the operator lists more), bounded in size, redirects checked at every hop, and
// each request in the bot's logs by method, host, status and time only. Driven through `callAction` of
// the bot's actions with the official client, against a real HTTP server of the test's own.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { deployPackage, json, logsSince } from './helpers/deployed-bots.ts';
import type { DeployedBot, Files } from './helpers/deployed-bots.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { docsBlock } from './helpers/docs.ts';

const free = { input: { type: 'object' }, output: { type: 'object' } };
/** An action of the bot: its code, with `input` and `fetch` in scope. */
const action = (code: string): Record<string, string> => ({ json: json(free), code });

const ACTIONS = {
  getJson: action(
    "const r = await fetch(input.url, { headers: { 'x-test': 'yes' } });\n" +
      "return { status: r.status, ok: r.ok, redirected: r.redirected, type: r.headers.get('content-type'), body: await r.json() };\n",
  ),
  postJson: action(
    "const r = await fetch(input.url, { method: 'POST', headers: [['content-type', 'application/json']], body: JSON.stringify({ a: 1, text: 'héllo' }) });\n" +
      'return await r.json();\n',
  ),
  bytes: action(
    'const sent = new Uint8Array([0, 255, 128, 10]);\n' +
      "const r = await fetch(input.url, { method: 'PUT', body: sent });\n" +
      'return { bytes: Array.from(new Uint8Array(await r.arrayBuffer())) };\n',
  ),
  many: action(
    'const all = await Promise.allSettled(Array.from({ length: 9 }, () => fetch(input.url)));\n' +
      "return { answered: all.filter((r) => r.status === 'fulfilled').length, refused: all.filter((r) => r.status === 'rejected').map((r) => r.reason.message) };\n",
  ),
  tryFetch: action(
    'try {\n  const r = await fetch(input.url);\n  return { status: r.status };\n} catch (e) {\n  return { error: e.message };\n}\n',
  ),
};

/** The docs' example (docs/writing-bots.md), run as the bot's `order` action against the test's server instead of the example host. */
async function readmeExample(targetUrl: string): Promise<string> {
  const code = await docsBlock('docs/writing-bots.md', 'bot code: fetch');
  return code.replaceAll('https://api.example.com', targetUrl);
}

async function fetchBot(targetUrl: string): Promise<Files> {
  const files: Files = {
    'bot.json': json({
      formatVersion: 1,
      name: 'fetch-bot',
      configuration: { secrets: ['ORDERS_API_KEY'] },
    }),
    'actions/order.json': json(free),
    'actions/order.ts': await readmeExample(targetUrl),
    'workflows/main.json': json({ nodes: [{ id: 'start', type: 'start' }] }),
  };
  for (const [name, { json: io, code }] of Object.entries(ACTIONS)) {
    files[`actions/${name}.json`] = io ?? '';
    files[`actions/${name}.ts`] = code ?? '';
  }
  return files;
}

/** The APIs bots call: JSON, an echo, bytes, redirects, and an answer too large. */
async function startTarget(): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (path === '/orders/42') {
        const authorized = req.headers.authorization === 'Bearer k-123';
        res.writeHead(authorized ? 200 : 401, { 'content-type': 'application/json' });
        res.end(JSON.stringify(authorized ? { id: 42, status: 'shipped' } : { error: 'no key' }));
      } else if (path === '/json') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ hello: 'world', sawHeader: req.headers['x-test'] ?? null }));
      } else if (path === '/echo') {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            method: req.method,
            type: req.headers['content-type'],
            body: body.toString('utf8'),
          }),
        );
      } else if (path === '/bytes') {
        // The body back, as bytes that are not UTF-8.
        res.setHeader('content-type', 'application/octet-stream');
        res.end(body);
      } else if (path === '/redirect-in') {
        res.writeHead(302, { location: '/json' }).end();
      } else if (path === '/redirect-out') {
        // To a loopback port the operator did not list.
        res.writeHead(302, { location: 'http://127.0.0.1:1/json' }).end();
      } else if (path === '/slow') {
        setTimeout(() => res.end('late'), 300);
      } else if (path === '/big') {
        res.end(Buffer.alloc(6 * 1024 * 1024, 97));
      } else {
        res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

for (const store of await testStores()) {
  describe(`fetch in bot code (${store.name})`, { skip: store.skip }, () => {
    let target: Awaited<ReturnType<typeof startTarget>>;
    /** A server whose bots may reach the target's port on loopback (as an operator lists an intranet API). */
    let allowed: TestServer;
    let allowedBot: DeployedBot;
    /** A server with the default policy: public addresses only. */
    let strict: TestServer;
    let strictBot: DeployedBot;
    before(async () => {
      target = await startTarget();
      allowed = await startTestServer(store, { botFetchPrivateTargets: `127.0.0.1:${target.port}` });
      allowedBot = await deployPackage(allowed, await fetchBot(target.url));
      await allowed.client().updateBot({ id: allowedBot.botId, secrets: { ORDERS_API_KEY: 'k-123' } });
      strict = await startTestServer(store);
      strictBot = await deployPackage(strict, await fetchBot(target.url));
    });
    after(async () => {
      await allowed?.close();
      await strict?.close();
      await target?.close();
    });

    const call = async (bot: DeployedBot, type: string, input: Record<string, string>) =>
      (await bot.client.callAction({ type, input })).output;

    test('by default only public addresses: loopback, private, link-local and metadata are refused', async () => {
      for (const url of [
        `${target.url}/json`,
        'http://localhost:9/',
        'http://[::1]:9/',
        'http://10.0.0.1/',
        'http://169.254.169.254/latest/meta-data/',
        'http://[::ffff:127.0.0.1]:9/',
      ]) {
        const { error } = await call(strictBot, 'tryFetch', { url });
        assert.match(String(error), /not a public address \(PARLEY_BOT_FETCH_PRIVATE_TARGETS/, url);
      }
      const { error } = await call(strictBot, 'tryFetch', { url: 'file:///etc/passwd' });
      assert.match(String(error), /only http and https/);
    });

    test('a listed address answers: JSON with the headers sent, a POST body, bytes both ways', async () => {
      assert.deepEqual(await call(allowedBot, 'getJson', { url: `${target.url}/json` }), {
        status: 200,
        ok: true,
        redirected: false,
        type: 'application/json',
        body: { hello: 'world', sawHeader: 'yes' },
      });
      assert.deepEqual(await call(allowedBot, 'postJson', { url: `${target.url}/echo` }), {
        method: 'POST',
        type: 'application/json',
        body: JSON.stringify({ a: 1, text: 'héllo' }),
      });
      assert.deepEqual(await call(allowedBot, 'bytes', { url: `${target.url}/bytes` }), {
        bytes: [0, 255, 128, 10],
      });
    });

    test("the README's example reads an order with the key from the bot's secrets", async () => {
      assert.deepEqual(await call(allowedBot, 'order', { orderId: '42' }), { id: 42, status: 'shipped' });
    });

    test('redirects are followed and checked at each hop; a listed address but another port is refused', async () => {
      const followed = await call(allowedBot, 'getJson', { url: `${target.url}/redirect-in` });
      assert.equal(followed.redirected, true);
      assert.deepEqual(followed.body, { hello: 'world', sawHeader: 'yes' });
      const { error } = await call(allowedBot, 'tryFetch', { url: `${target.url}/redirect-out` });
      assert.match(String(error), /127\.0\.0\.1 is not a public address/);
    });

    test('an answer past the size limit fails the fetch, not the server', async () => {
      const { error } = await call(allowedBot, 'tryFetch', { url: `${target.url}/big` });
      assert.match(String(error), /larger than 5242880 bytes/);
      assert.deepEqual((await call(allowedBot, 'tryFetch', { url: `${target.url}/json` })).status, 200);
    });

    test('one call has at most 8 requests in flight at once', async () => {
      assert.deepEqual(await call(allowedBot, 'many', { url: `${target.url}/slow` }), {
        answered: 8,
        refused: ['fetch: at most 8 requests of one call may be in flight at once'],
      });
    });

    test("the bot's logs show each request's method, host, status and time, never its path or query", async () => {
      const since = new Date(Date.now() - 1000).toISOString();
      await call(allowedBot, 'tryFetch', { url: `${target.url}/json?key=s3cret-value` });
      await call(strictBot, 'tryFetch', { url: `${target.url}/json?key=s3cret-value` });
      const lines = [
        ...(await logsSince(allowed, allowedBot.botId, since)),
        ...(await logsSince(strict, strictBot.botId, since)),
      ].map((l) => `${l.level} ${l.message}`);
      const host = `127.0.0.1:${target.port}`;
      assert.ok(
        lines.some((l) =>
          new RegExp(`^info fetch GET ${host.replace(/\./g, '\\.')}: 200 in \\d+ ms$`).test(l),
        ),
        JSON.stringify(lines),
      );
      assert.ok(
        lines.some((l) =>
          l.startsWith(`warn fetch GET ${host} failed: fetch: 127.0.0.1 is not a public address`),
        ),
        JSON.stringify(lines),
      );
      assert.ok(!lines.some((l) => l.includes('s3cret')), 'no query in the logs');
    });
  });
}
