// GET /metrics as Prometheus scrapes it: requests by route pattern and status, the queue, turns,
// streams and the sandbox, and nothing that names a record.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deployPackage, json, sendAndWait, startChat } from './helpers/deployed-bots.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** The value of one series of the text format, or undefined when it is absent. */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

for (const store of await testStores()) {
  describe(`metrics (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t?.close());

    test('requests, turns, the queue, streams and the sandbox, in the Prometheus text format', async () => {
      await fetch(`${t.url}/healthz`);
      const bot = await deployPackage(t, {
        'bot.json': json({ formatVersion: 1, name: 'metered' }),
        'workflows/main.json': json({
          nodes: [
            { id: 'start', type: 'start', next: 'code' },
            {
              id: 'code',
              type: 'standard',
              cards: [
                { type: 'code', code: "console.info('hi');\n" },
                { type: 'say', message: { type: 'text', text: 'ok' } },
              ],
            },
          ],
        }),
      });
      const c = await startChat(bot);
      const counters = async () => {
        const text = await (await fetch(`${t.url}/metrics`)).text();
        return ['parley_sql_statements_total', 'parley_sql_commits_total', 'parley_sandbox_calls_total'].map(
          (name) => valueOf(text, name) ?? 0,
        );
      };
      const before = await counters();
      const turn = await sendAndWait(bot, c, 'hello');
      assert.equal(turn.status, 'processed');
      // What a turn cost is counted: statements and commits of the store, calls into bot code (one card).
      const [statements, commits, sandboxCalls] = await counters();
      assert.ok(statements! > before[0]! + 5, `statements counted: ${before[0]} then ${statements}`);
      // On SQLite at least the group commit that held the message. On PostgreSQL the message (no webhook
      // wants its event) and the bot's reply are each one statement, which commits by itself (uncounted).
      assert.ok(before[1]! > 0, 'the transactions of creating and deploying the bot were counted');
      const committed = store.name === 'sqlite' ? 1 : 0;
      assert.ok(commits! >= before[1]! + committed, `commits counted: ${before[1]} then ${commits}`);
      assert.ok(commits! < statements!);
      assert.equal(sandboxCalls, before[2]! + 1, 'one call into bot code: the code card');
      const listener = await c.chat.listenConversation({ id: c.conversationId });

      const res = await fetch(`${t.url}/metrics`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      const text = await res.text();
      assert.ok(
        (valueOf(
          text,
          'parley_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"}',
        ) ?? 0) >= 1,
      );
      assert.ok((valueOf(text, 'parley_turn_duration_seconds_count{outcome="processed"}') ?? 0) >= 1);
      assert.equal(valueOf(text, 'parley_queue_depth'), 0);
      assert.equal(valueOf(text, 'parley_open_event_streams'), 1);
      assert.match(text, /^parley_sandbox_resident_memory_bytes\{pid="\d+"\} \d+/m);
      assert.match(text, /^parley_sandbox_restarts_total 0$/m);
      assert.match(text, /^parley_process_resident_memory_bytes \d+/m);
      // Route patterns only: no record's id becomes a series.
      assert.doesNotMatch(text, /[a-z]+_[0-9A-HJKMNP-TV-Z]{26}/);
      await listener.disconnect();
    });
  });
}
