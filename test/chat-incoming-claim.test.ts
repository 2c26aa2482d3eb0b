// On PostgreSQL a user's message is claimed for this process's engine by the statement that stores it
// (src/domain/runtime/messages.ts, insertIncoming; event-queue.ts, claimsAsStored) when nothing of its
// conversation waits before it, and by a claim after the commit when the conversation's row changed while
// the statement waited for it: an event stored meanwhile is not in the statement's snapshot.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { newId } from '../src/domain/shared/ids.ts';
import { whileChangedOutside } from './helpers/held-rows.ts';
import { deployPackage, oneNodePackage, send, startChat, waitForTurn } from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from './helpers/deployed-bots.ts';
import { leastCosts, statementsRun, turnsEnded, waitFor } from './helpers/runtime.ts';
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

/**
 * A message's request alone, behind a turn of its conversation that runs: the lookup, and the insert,
 * which holds the running turn (whose end claims the event). Before, a claim of its own followed it.
 */
const REQUEST_STATEMENTS = 2;

const BUSY_WHEN_SLOW =
  "if (event.preview === 'slow') { const end = Date.now() + 400; while (Date.now() < end) {} }";

describe("a user's message is claimed as it is stored (postgres)", { skip: postgres?.skip }, () => {
  let t: TestServer;
  let bot: DeployedBot;
  let c: Chatter;
  before(async () => {
    if (!postgres) return;
    t = await startTestServer(postgres);
    bot = await deployPackage(
      t,
      oneNodePackage('claimed-as-stored', [
        // A turn that runs a while, for a message to come behind it.
        { type: 'code', code: BUSY_WHEN_SLOW },
        { type: 'say', message: { type: 'text', text: 'ok' } },
      ]),
    );
    c = await startChat(bot);
    // The sweeps (several statements every 200 ms) would land in most measures on a busy machine; nothing
    // here is scheduled or expires.
    await t.server.sweeper.stop();
  });
  after(() => t?.close());

  test('in the statement that stores it, when its conversation has nothing waiting', async () => {
    // A message and its whole turn, from the request to the turn's end, with nothing else of the test
    // in between: the server's polls may run statements meanwhile, so the least is the cost.
    const costs = await leastCosts(MESSAGE_STATEMENTS, { tries: 40, counted: 4 }, async (i) => {
      const start = await statementsRun(t);
      const ended = await turnsEnded(t);
      const messageId = await send(c, `hello ${i}`);
      await waitFor('the turn to end', async () => (await turnsEnded(t)) > ended, 15_000, 10);
      const cost = (await statementsRun(t)) - start;
      const turn = await waitForTurn(bot, c, { messageId });
      assert.equal(turn.status, 'processed');
      return cost;
    });
    assert.equal(Math.min(...costs), MESSAGE_STATEMENTS, `statements per message: ${costs.join(', ')}`);
  });

  test('behind a turn that runs, with no claim of its own: the turn claims it as it ends', async () => {
    const db = new pg.Client({ connectionString: t.settings.databaseUrl });
    await db.connect();
    try {
      const costs = await leastCosts(REQUEST_STATEMENTS, { tries: 20, counted: 3 }, async (i) => {
        const slowId = await send(c, 'slow');
        const start = await statementsRun(t);
        const messageId = await send(c, `behind ${i}`);
        const cost = (await statementsRun(t)) - start;
        const turn = await waitForTurn(bot, c, { messageId });
        assert.equal(turn.status, 'processed');
        const { rows } = await db.query<{ behind: boolean }>(
          `select m.created_at < s.updated_at as behind from events m, events s
           where m.id = $1 and s.message_id = $2`,
          [turn.id, slowId],
        );
        // Counted only when the message was stored while the slow turn ran (its turn comes after).
        return rows[0]?.behind ? cost : undefined;
      });
      assert.ok(costs.length > 0, 'a message came while a turn ran');
      assert.equal(Math.min(...costs), REQUEST_STATEMENTS, `statements: ${costs.join(', ')}`);
    } finally {
      await db.end();
    }
  });

  test('in the statement that stores it, behind a turn whose end commits while the statement waits for it', async () => {
    // A turn of the conversation runs (its event under another process's lease) and ends, committing
    // while the message's statement waits for that end: the statement's snapshot still has the turn
    // running, and only the lock it waited for tells that the turn is over.
    const db = new pg.Client({ connectionString: t.settings.databaseUrl });
    await db.connect();
    try {
      const costs = await leastCosts(MESSAGE_STATEMENTS, { tries: 40, counted: 4 }, async (i) => {
        const runningId = newId('event');
        await db.query(
          `insert into events (id, bot_id, workspace_id, type, payload, conversation_id, status, attempts,
             deliveries, lease_owner, lease_until, created_at, updated_at)
           select $1, b.id, b.workspace_id, 'chat:custom', '{}', $2, 'pending', 0, 1, 'another process',
             $3, $4, $4
           from bots b where b.id = $5`,
          [
            runningId,
            c.runtimeConversationId,
            new Date(Date.now() + 60_000).toISOString(),
            new Date().toISOString(),
            bot.botId,
          ],
        );
        const start = await statementsRun(t);
        const ended = await turnsEnded(t);
        const messageId = await whileChangedOutside(
          t.settings.databaseUrl ?? '',
          `update events set status = 'processed', lease_owner = null, lease_until = null where id = $1`,
          [runningId],
          () => send(c, `after the end ${i}`),
        );
        await waitFor('the turn to end', async () => (await turnsEnded(t)) > ended, 15_000, 10);
        const cost = (await statementsRun(t)) - start;
        const turn = await waitForTurn(bot, c, { messageId });
        assert.equal(turn.status, 'processed');
        return cost;
      });
      assert.equal(Math.min(...costs), MESSAGE_STATEMENTS, `statements: ${costs.join(', ')}`);
    } finally {
      await db.end();
    }
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
