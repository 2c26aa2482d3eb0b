// A turn's end on PostgreSQL claims the next event of its conversation in the statement that ends it
// (src/domain/queue/event-queue.ts, finishClaimingNext), and leaves the claim to the one after it when
// the conversation's row changed while the statement ran (an event may have been stored meanwhile).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalWorker } from '../src/domain/queue/event-queue.ts';
import { whileChangedOutside } from './helpers/held-rows.ts';
import { createTestBot, leastCosts, statementsRun } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const postgres = (await testStores()).find((store) => store.name === 'postgres');

/** The engine's side of the queue, as a turn's end sees it: it wants every successor, and notes each look. */
class SuccessorWorker implements LocalWorker {
  readonly owner = 'turn-successor-test';
  readonly leaseMs = 60_000;
  readonly lookedFor: string[] = [];
  accepting(): boolean {
    return false;
  }
  takesSuccessorOf(): boolean {
    return true;
  }
  successorLookedFor(eventId: string): void {
    this.lookedFor.push(eventId);
  }
}

describe("a turn's end claims its successor (postgres)", { skip: postgres?.skip }, () => {
  let t: TestServer;
  let bot: TestBot;
  let worker: SuccessorWorker;
  let conversationId: string;
  before(async () => {
    if (!postgres) return;
    t = await startTestServer(postgres);
    // A bot without code: no engine claims its events, so the test's worker stands in for the engine.
    bot = await createTestBot(t, 'successor');
    worker = new SuccessorWorker();
    t.server.domain.queue.serveLocally(worker);
    ({
      conversation: { id: conversationId },
    } = await bot.client.createConversation({ channel: 'channel', tags: {} }));
    // The sweeps' statements would land in the measures; nothing here is scheduled or expires.
    await t.server.sweeper.stop();
  });
  after(() => t?.close());

  const queueEvent = async () =>
    (await bot.client.createEvent({ type: 'chat:custom', payload: {}, conversationId })).event.id;
  const endTurn = (eventId: string) =>
    t.server.domain.states.writeAtTurnEnd(
      { botId: bot.botId, workspaceId: t.workspaceId },
      [{ key: { type: 'conversation', id: conversationId, name: 'dialog' }, payload: { ended: eventId } }],
      eventId,
      'processed',
    );

  test('ends the event and looks for the next one in one statement', async () => {
    // The server's polls may run statements meanwhile: the least is the cost.
    const costs = await leastCosts(1, { tries: 20, counted: 5 }, async () => {
      const ended = await queueEvent();
      const next = await queueEvent();
      const start = await statementsRun(t);
      await endTurn(ended);
      const cost = (await statementsRun(t)) - start;
      assert.equal(worker.lookedFor.at(-1), ended, 'its successor was looked for as it ended');
      assert.equal((await bot.client.getEvent({ id: ended })).event.status, 'processed');
      // The bot runs no code: its next event is not claimed, and stays pending for the next turn's end.
      assert.equal((await bot.client.getEvent({ id: next })).event.status, 'pending');
      await endTurn(next);
      return cost;
    });
    assert.equal(Math.min(...costs), 1, `statements per turn end: ${costs.join(', ')}`);
  });

  test('leaves the look to the claim after it when the conversation changed meanwhile', async () => {
    const ended = await queueEvent();
    const looks = worker.lookedFor.length;
    // Another request took the conversation's row (as an event queued in it does) and commits while the
    // turn's end waits for it: the end's snapshot, taken before, cannot see what it stored.
    await whileChangedOutside(
      t.settings.databaseUrl ?? '',
      'update conversations set updated_at = updated_at where id = $1',
      [conversationId],
      () => endTurn(ended),
    );
    assert.equal((await bot.client.getEvent({ id: ended })).event.status, 'processed');
    assert.equal(worker.lookedFor.length, looks, 'the claim after the end looks for the successor');
    // Unchanged, the next end looks for it itself again.
    await endTurn(await queueEvent());
    assert.equal(worker.lookedFor.length, looks + 1);
  });
});
