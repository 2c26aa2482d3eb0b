// Admission control after a quiet while (issue 37): the engines' pace is the more of the turns they ended
// over the last window and of their places over their turn time. The window alone counts what a quiet
// engine was asked: once the first turns of a burst ended, it said a turn or two a second, and the rest
// of the burst, which the engine answers within the wait, was refused with 429.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deployPackage, oneNodePackage, send, startChat } from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from './helpers/deployed-bots.ts';
import { sleep, turnsEnded, waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** The engine's places: admission's floor is twice as many waiting events. */
const PLACES = 2;
/** Conversations that each send one message in the burst: many more than the floor. */
const CONVERSATIONS = 20;
/** Past admission's window of turn ends (2 s): the window is empty as the burst begins. */
const QUIET_MS = 2500;

for (const store of await testStores()) {
  describe(`admission control, a burst after a quiet while (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    let chats: Chatter[];
    before(async () => {
      t = await startTestServer(store, {
        engineConcurrency: String(PLACES),
        // Long enough that the burst is in time at any turn time a busy machine gives these turns.
        admissionWaitMs: '5000',
      });
      bot = await deployPackage(
        t,
        oneNodePackage('burst', [{ type: 'say', message: { type: 'text', text: 'ok' } }]),
      );
      chats = [];
      for (let i = 0; i < CONVERSATIONS; i++) chats.push(await startChat(bot));
    });
    after(() => t?.close());

    test('is admitted as the turn time allows, though its first turns are all the window counted', async () => {
      // Turns that ended, for a turn time; then a quiet while.
      for (const c of chats.slice(0, 3)) await send(c, 'warm');
      await waitFor('the warm-up turns to end', async () => (await turnsEnded(t)) >= 3, 15_000);
      await sleep(QUIET_MS);

      const ended = await turnsEnded(t);
      const [first, ...rest] = chats as [Chatter, ...Chatter[]];
      await send(first, 'first');
      await waitFor(
        'the first turn of the burst to end',
        async () => (await turnsEnded(t)) > ended,
        15_000,
        10,
      );
      const answers = await Promise.allSettled(rest.map((c) => send(c, 'burst')));
      const refused = answers.flatMap((a) => (a.status === 'rejected' ? [String(a.reason)] : []));
      assert.deepEqual(refused, [], `${refused.length} of ${rest.length} refused`);
      await waitFor(
        'every message of the burst to be answered',
        async () => (await turnsEnded(t)) >= ended + CONVERSATIONS,
        30_000,
      );
    });
  });
}
