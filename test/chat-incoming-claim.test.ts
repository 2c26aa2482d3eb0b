// On PostgreSQL a user's message is claimed for this process's engine by the statement that stores it
// (src/domain/runtime/messages.ts, insertIncoming; event-queue.ts, claimsAsStored) when nothing of its
// conversation waits before it, and by a claim after the commit when the conversation's row changed while
// the statement waited for it: an event stored meanwhile is not in the statement's snapshot.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { newId } from '../src/domain/shared/ids.ts';
import { whileChangedOutside } from './helpers/held-rows.ts';
import { deployPackage, json, send, startChat, waitForTurn } from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from './helpers/deployed-bots.ts';
import { statementsRun, waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const postgres = (await testStores()).find((store) => store.name === 'postgres');

/**
 * A message's statements with its turn's: the request's lookup of the user, the conversation and the
 * participant, and the insert that claims the event (before, a claim of its own followed it); the
 * turn's read of its records, its reply, and its end.
 */
const MESSAGE_STATEMENTS = 5;

/** Turns the server has ended so far, from its /metrics. */
async function turnsEnded(t: TestServer): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('parley_turn_duration_seconds_count'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe("a user's message is claimed as it is stored (postgres)", { skip: postgres?.skip }, () => {
  let t: TestServer;
  let bot: DeployedBot;
  let c: Chatter;
  before(async () => {
    if (!postgres) return;
    t = await startTestServer(postgres);
    bot = await deployPackage(t, {
      'bot.json': json({ formatVersion: 1, name: 'claimed-as-stored' }),
      'workflows/main.json': json({
        nodes: [
          { id: 'start', type: 'start', next: 'answer' },
          { id: 'answer', type: 'standard', cards: [{ type: 'say', message: { type: 'text', text: 'ok' } }] },
        ],
      }),
    });
    c = await startChat(bot);
  });
  after(() => t?.close());

  test('in the statement that stores it, when its conversation has nothing waiting', async () => {
    const costs: number[] = [];
    // A message and its whole turn, from the request to the turn's end, with nothing else of the test
    // in between: the server's polls may run statements meanwhile, so the least is the cost.
    for (let i = 0; i < 40 && (i < 4 || Math.min(...costs) > MESSAGE_STATEMENTS); i++) {
      const start = await statementsRun(t);
      const ended = await turnsEnded(t);
      const messageId = await send(c, `hello ${i}`);
      await waitFor('the turn to end', async () => (await turnsEnded(t)) > ended, 15_000, 10);
      costs.push((await statementsRun(t)) - start);
      const turn = await waitForTurn(bot, c, { messageId });
      assert.equal(turn.status, 'processed');
    }
    assert.equal(Math.min(...costs), MESSAGE_STATEMENTS, `statements per message: ${costs.join(', ')}`);
  });

  test('after its commit, behind an event stored while the statement waited for the conversation', async () => {
    // Another request stores an event in the conversation (stamping its row, as every queued event does)
    // and commits while the message's statement waits for the row: the statement's snapshot lacks that
    // event, which comes first. Claimed as it was stored, the message's turn would run before it.
    const earlierId = newId('event');
    const messageId = await whileChangedOutside(
      t.settings.databaseUrl ?? '',
      `with stamped as (
         update conversations set last_event_at = $2 where id = $1 returning id, bot_id, last_event_at)
       insert into events (id, bot_id, workspace_id, type, payload, conversation_id, status, attempts,
         deliveries, created_at, updated_at)
       select $3, s.bot_id, b.workspace_id, 'chat:custom', '{}', s.id, 'pending', 0, 0, s.last_event_at,
         s.last_event_at
       from stamped s join bots b on b.id = s.bot_id`,
      [c.runtimeConversationId, new Date().toISOString(), earlierId],
      () => send(c, 'after the other'),
    );
    const turn = await waitForTurn(bot, c, { messageId });
    assert.equal(turn.status, 'processed');
    const earlier = await waitForTurn(bot, c, { eventId: earlierId });
    assert.notEqual(earlier.status, 'failed', 'the event stored first had its turn');
    // An event's last update is its turn's end: the earlier one's turn ended before the message's.
    const db = new pg.Client({ connectionString: t.settings.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ id: string }>(
        'select id from events where id = any($1) order by updated_at',
        [[earlierId, turn.id]],
      );
      assert.deepEqual(
        rows.map((r) => r.id),
        [earlierId, turn.id],
        'the turns ran in the order of their events',
      );
    } finally {
      await db.end();
    }
  });
});
