// An event whose runner dies at each delivery (here: the `parley serve` process running its turn is
// killed mid-turn, and started again) is delivered MAX_INTERRUPTED_DELIVERIES times, then given up:
// marked failed with the reason, in the bot's logs, never run again, while the server answers the rest.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client } from '@botpress/client';
import { MAX_INTERRUPTED_DELIVERIES } from '../../src/domain/queue/event-queue.ts';
import { ChatSession, deployWithCli, textOf, turnOutcome } from '../helpers/chat-bots.ts';
import { waitFor } from '../helpers/runtime.ts';
import { ServeProcesses } from '../helpers/serve-processes.ts';
import type { ServedProcess } from '../helpers/serve-processes.ts';
import { testStores } from '../helpers/stores.ts';

/**
 * How long a delivery may take to begin after a start: on Postgres the killed process's claim lapses
 * first (2.5 s), then the next poll takes it. Generous: a busy machine starts processes slowly.
 */
const DELIVERY_WITHIN_MS = 30_000;

/** Calls into bot code this server made (`parley_sandbox_calls_total`): the card of a turn starting. */
async function sandboxCalls(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^parley_sandbox_calls_total (\S+)$/m.exec(text)?.[1] ?? 0);
}

for (const store of await testStores()) {
  describe(`an event whose runner dies at each delivery (${store.name})`, { skip: store.skip }, () => {
    const servers = new ServeProcesses(store, 'given-up');
    const { token } = servers;
    const sessions: ChatSession[] = [];
    after(async () => {
      for (const session of sessions) await session.close();
      await servers.close();
    });
    /** `parley serve` on the suite's data folder (and PostgreSQL schema). */
    const serve = () => servers.serve();

    async function kill(server: ServedProcess): Promise<void> {
      server.proc.child.kill('SIGKILL');
      await server.proc.exited;
    }

    /** Waits until the server has made `calls` calls into bot code (turns are running), then kills it. */
    async function killMidTurn(server: ServedProcess, calls: number): Promise<void> {
      await waitFor(
        'the turn to run on this server',
        async () => (await sandboxCalls(server.url)) >= calls,
        DELIVERY_WITHIN_MS,
        50,
      );
      await kill(server);
    }

    test(`is run ${MAX_INTERRUPTED_DELIVERIES} times, then marked failed with the reason, in the bot's logs; the server answers others`, async () => {
      let server = await serve();
      const [, workspaceId] = await server.proc.waitFor(/workspace id: (\S+)/);
      assert.ok(workspaceId);
      const target = { url: server.url, token, workspaceId };
      const endless = await deployWithCli(target, 'test/fixtures/endless-turn');
      const slow = await deployWithCli(target, 'test/fixtures/slow-cards');
      const echo = await deployWithCli(target, 'examples/echo-bot');

      // The endless turn, and another bot's slow turn beside it when the process is first killed.
      const s = await ChatSession.open(endless.webhookUrl);
      const beside = await ChatSession.open(slow.webhookUrl);
      sessions.push(s, beside);
      const before = await sandboxCalls(server.url);
      const messageId = await s.say('go');
      const besideId = await beside.say('go');
      await killMidTurn(server, before + 2);
      // Each time again, as soon as a turn runs (the two may not run beside each other now, and either may
      // be taken first: a restart that ran the other's turn did not deliver this one), until a server
      // gives it up rather than run it: a turn that runs after that is the other's, and is left to end.
      const statusOf = async (runtime: Client) =>
        (await runtime.listEvents({ messageId })).events.find((e) => e.type === 'message_created')?.status;
      for (let restarts = 1; ; restarts++) {
        assert.ok(
          restarts <= MAX_INTERRUPTED_DELIVERIES + 1,
          `still not given up after ${restarts} restarts`,
        );
        server = await serve();
        const runtime = new Client({ apiUrl: server.url, token, workspaceId, botId: endless.botId });
        await waitFor(
          'a turn to run on this server',
          async () => (await sandboxCalls(server.url)) >= 1 || (await statusOf(runtime)) === 'failed',
          DELIVERY_WITHIN_MS,
          50,
        );
        // Given up as it was claimed, before anything after it began.
        if ((await statusOf(runtime)) === 'failed') break;
        await kill(server);
      }

      // The delivery past the last is not run: the event is marked failed with the reason.
      const runtime = new Client({ apiUrl: server.url, token, workspaceId, botId: endless.botId });
      const outcome = await turnOutcome(runtime, messageId, DELIVERY_WITHIN_MS);
      assert.equal(outcome.status, 'failed');
      assert.equal(
        outcome.failureReason,
        `not run again: delivered ${MAX_INTERRUPTED_DELIVERIES} times, and each time the process running its turn stopped before the turn ended (it was killed or crashed)`,
      );

      const admin = new Client({ apiUrl: server.url, token, workspaceId });
      const { logs } = await admin.getBotLogs({
        id: endless.botId,
        timeStart: new Date(Date.now() - 10 * 60_000).toISOString(),
        timeEnd: new Date(Date.now() + 60_000).toISOString(),
      });
      const [event] = (await runtime.listEvents({ messageId })).events;
      assert.ok(event);
      const line = logs.find((l) => l.message.includes('was given up'));
      assert.ok(line, `the bot's logs say so: ${JSON.stringify(logs.map((l) => l.message))}`);
      assert.equal(line.level, 'error');
      assert.equal(
        line.message,
        `The turn of event ${event.id} (message_created) was given up: ${outcome.failureReason}`,
      );
      assert.equal(line.conversationId, event.conversationId);

      // The turn killed beside it the first time was not given up with it: it ran alone, and ended.
      const slowRuntime = new Client({ apiUrl: server.url, token, workspaceId, botId: slow.botId });
      assert.deepEqual(await turnOutcome(slowRuntime, besideId, DELIVERY_WITHIN_MS), {
        status: 'processed',
        failureReason: null,
      });
      const again = await ChatSession.resume(
        server.url + new URL(slow.webhookUrl).pathname,
        beside.userKey,
        beside.conversationId,
      );
      assert.deepEqual(
        (await again.history()).filter((m) => m.userId === slow.botId).map(textOf),
        ['one', 'two', 'three'],
        'its replies, each once',
      );

      // The same server answers another conversation, of another bot.
      const other = await ChatSession.open(server.url + new URL(echo.webhookUrl).pathname);
      sessions.push(other);
      await other.say('still there?');
      assert.deepEqual((await other.nextReplies(1)).map(textOf), ['You said: still there?']);
    });
  });
}
