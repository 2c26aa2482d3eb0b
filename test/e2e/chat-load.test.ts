import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { createChatBot, eventually, listenUrl, openSse, signalOf } from '../helpers/sse.ts';
import type { SseStream } from '../helpers/sse.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';

const LISTENERS = 1000;
const BATCH = 100;
const MB = 1024 * 1024;

const sqlite = (await testStores()).find((s) => s.name === 'sqlite')!;

describe('chat load: 1,000 open event streams on one process (sqlite)', { skip: sqlite.skip }, () => {
  let t: TestServer;
  const streams: SseStream[] = [];
  before(async () => {
    // A load check: it measures the server, not its limiter (one user opens every stream, each on a
    // connection of its own from one address).
    t = await startTestServer(sqlite, { rateLimits: 'off', maxConnectionsPerAddress: String(LISTENERS * 2) });
  });
  after(async () => {
    for (const s of streams) s.destroy();
    await t.close();
  });

  test(
    `${LISTENERS} listeners of one conversation all receive one message`,
    { timeout: 30_000 },
    async () => {
      const started = Date.now();
      const bot = await createChatBot(t, 'chat-load');
      const user = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'crowd' });
      await user.createConversation({ id: 'stadium' });
      const url = listenUrl(bot.webhookUrl, 'stadium');

      globalThis.gc?.();
      const before = process.memoryUsage();
      const received = new Array<number>(LISTENERS).fill(0);
      const others = new Array<number>(LISTENERS).fill(0);
      for (let first = 0; first < LISTENERS; first += BATCH) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(BATCH, LISTENERS - first) }, (_, j) => {
            const index = first + j;
            return openSse(url, {
              userKey: user.user.key,
              timeoutMs: 20_000,
              onFrame: (frame) => {
                const signal = signalOf(frame);
                if (!signal) return;
                if (
                  signal.type === 'message_created' &&
                  (signal.data.payload as { text?: string }).text === 'to all'
                )
                  received[index]!++;
                else others[index]!++;
              },
            });
          }),
        );
        streams.push(...batch);
      }
      const opened = Date.now();
      assert.equal(streams.length, LISTENERS);
      assert.ok(
        streams.every((s) => s.status === 200),
        'every stream opened with 200',
      );
      const open = process.memoryUsage();

      await user.createMessage({ conversationId: 'stadium', payload: { type: 'text', text: 'to all' } });
      await eventually(
        `the message on all ${LISTENERS} streams`,
        () => received.every((n) => n >= 1),
        20_000,
      );
      const delivered = Date.now();
      globalThis.gc?.();
      const afterDelivery = process.memoryUsage();

      assert.deepEqual(
        received.filter((n) => n !== 1),
        [],
        'every listener received the message exactly once',
      );
      assert.deepEqual(
        others.filter((n) => n !== 0),
        [],
        'and nothing else',
      );
      assert.ok(
        streams.every((s) => !s.ended),
        'every stream is still open',
      );

      const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
      const perListener = (afterDelivery.rss - before.rss) / LISTENERS / 1024;
      console.log(
        [
          `chat load: ${LISTENERS} SSE listeners on one process (server and clients in the same Node process)`,
          `  rss before ${mb(before.rss)}, with ${LISTENERS} streams open ${mb(open.rss)}, after delivery ${mb(afterDelivery.rss)}`,
          `  rss growth ${mb(afterDelivery.rss - before.rss)} (~${perListener.toFixed(1)} KB per listener, both ends)`,
          `  heapUsed before ${mb(before.heapUsed)}, after ${mb(afterDelivery.heapUsed)}`,
          `  opening took ${opened - started} ms, delivery to all ${delivered - opened} ms`,
        ].join('\n'),
      );
    },
  );
});
