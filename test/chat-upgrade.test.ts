// Upgrade requests (WebSocket handshakes) to every kind of route: only a Chat API listener upgrades;
// anywhere else the request is answered as plain HTTP and its connection closed, never left open.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { createChatBot } from './helpers/sse.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** Sends a WebSocket handshake for `path`; answers the status line and whether the server closed the socket. */
async function handshake(
  url: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ statusLine: string; closedByServer: boolean }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
      `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${extra}\r\n`,
  );
  const closedByServer = await Promise.race([
    closed.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000)),
  ]);
  socket.destroy();
  return { statusLine: answer.split('\r\n')[0] ?? '', closedByServer };
}

for (const store of await testStores()) {
  describe(`upgrade requests (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let webhookPath: string;
    let key: string;
    let conversationId: string;
    before(async () => {
      t = await startTestServer(store);
      const bot = await createChatBot(t, 'upgrade-bot');
      webhookPath = new URL(bot.webhookUrl).pathname;
      const client = await chat.Client.connect({ apiUrl: bot.webhookUrl });
      key = client.user.key;
      conversationId = (await client.createConversation({})).conversation.id;
    });
    after(() => t?.close());

    test('routes that do not upgrade answer over HTTP and close the connection', async () => {
      const cases: [string, Record<string, string>, RegExp][] = [
        ['/healthz', {}, / 200 /],
        ['/v1/chat/users', {}, / 401 /],
        ['/no/such/route', {}, / 404 /],
        [`${webhookPath}/users/me`, { 'x-user-key': key }, / 200 /],
        [`${webhookPath}/conversations/${conversationId}/listen?x-user-key=bad`, {}, / 401 /],
        [`${webhookPath}/conversations/unknown/listen?x-user-key=${encodeURIComponent(key)}`, {}, / 404 /],
      ];
      for (const [path, headers, status] of cases) {
        const { statusLine, closedByServer } = await handshake(t.url, path, headers);
        assert.match(statusLine, status, `${path}: ${statusLine}`);
        assert.equal(closedByServer, true, `${path}: the server closed the connection`);
      }
    });

    test('a listener upgrades, and the server still stops at once after all of the above', async () => {
      const { statusLine, closedByServer } = await handshake(
        t.url,
        `${webhookPath}/conversations/${conversationId}/listen?x-user-key=${encodeURIComponent(key)}`,
      );
      assert.match(statusLine, / 101 /);
      assert.equal(closedByServer, false, 'an upgraded listener stays open');
      const started = Date.now();
      await t.server.close();
      assert.ok(Date.now() - started < 5000, `closed in ${Date.now() - started} ms`);
    });
  });
}
