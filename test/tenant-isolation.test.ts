import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_TAGS } from '../src/domain/shared/schemas.ts';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** How long /readyz and another tenant may take to answer while one tenant sends its costliest requests. */
const ANSWER_WITHIN_MS = 1000;

for (const store of await testStores()) {
  describe(
    `one tenant's costly requests do not stall the others (${store.name})`,
    { skip: store.skip },
    () => {
      let t: TestServer;
      let noisy: TestBot;
      let quiet: TestBot;
      let quietConversation: string;
      before(async () => {
        t = await startTestServer(store);
        noisy = await createTestBot(t, 'noisy');
        quiet = await createTestBot(t, 'quiet');
        quietConversation = (await quiet.client.createConversation({ channel: 'c', tags: {} })).conversation
          .id;
        // Records that share some of the tags the noisy tenant asks for, so its queries have work to do.
        for (let i = 0; i < 100; i++) {
          await noisy.client.createConversation({ channel: 'c', tags: { k1: 'v1', k2: 'v2', n: String(i) } });
        }
      });
      after(() => t.close());

      test(`the most tags a request may name, ten at once: /readyz and another bot answer within ${ANSWER_WITHIN_MS} ms`, async () => {
        const tags = Object.fromEntries(Array.from({ length: MAX_TAGS }, (_, i) => [`k${i}`, `v${i}`]));
        const slowest: number[] = [];
        for (let round = 0; round < 3; round++) {
          let running = true;
          const storm = Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              i % 2
                ? noisy.client.listConversations({ tags })
                : noisy.client.getOrCreateConversation({
                    channel: 'c',
                    tags: { ...tags, k99: `r${round}-${i}` },
                    discriminateByTags: Object.keys(tags),
                  }),
            ),
          ).finally(() => (running = false));
          let worst = 0;
          do {
            const started = performance.now();
            const [ready, other] = await Promise.all([
              fetch(`${t.url}/readyz`),
              quiet.client.getConversation({ id: quietConversation }),
            ]);
            assert.equal(ready.status, 200);
            assert.equal(other.conversation.id, quietConversation);
            worst = Math.max(worst, performance.now() - started);
          } while (running);
          await storm;
          slowest.push(worst);
        }
        console.log(
          `${store.name}: slowest /readyz + other tenant during the storm, per round: ${slowest.map(Math.round).join(', ')} ms (printed)`,
        );
        assert.ok(
          Math.max(...slowest) < ANSWER_WITHIN_MS,
          `the slowest answer took ${Math.round(Math.max(...slowest))} ms (rounds: ${slowest.map(Math.round).join(', ')})`,
        );
      });

      test(`a filter or a record with more than ${MAX_TAGS} tags is refused with 400`, async () => {
        const tags = Object.fromEntries(Array.from({ length: MAX_TAGS + 1 }, (_, i) => [`k${i}`, `v${i}`]));
        await assert.rejects(
          noisy.client.listConversations({ tags }),
          /must NOT have more than 100 properties/,
        );
        await assert.rejects(
          noisy.client.getOrCreateConversation({ channel: 'c', tags }),
          /must NOT have more than 100 properties/,
        );
      });
    },
  );
}
