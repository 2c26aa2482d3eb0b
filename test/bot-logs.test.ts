import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, ResourceNotFoundError } from '@botpress/client';
import type { Client } from '@botpress/client';
import type { BotLogEntry } from '../src/domain/bots/bot-logs.ts';
import { runParley } from './helpers/process.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

type Log = Awaited<ReturnType<Client['getBotLogs']>>['logs'][number];

/** An ISO timestamp `ms` milliseconds from now. */
const at = (ms: number): string => new Date(Date.now() + ms).toISOString();
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

for (const store of await testStores()) {
  describe(`Bot logs (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let emailCounter = 0;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t.close());

    interface Setup {
      workspaceId: string;
      client: Client;
      botId: string;
    }

    /** A bot in a workspace of its own. */
    async function freshBot(name: string): Promise<Setup> {
      const ws = await t.client().createWorkspace({ name });
      const client = t.client({ workspaceId: ws.id });
      const { bot } = await client.createBot({ name });
      return { workspaceId: ws.id, client, botId: bot.id };
    }

    const write = (botId: string, entries: BotLogEntry[]) => t.server.domain.botLogs.write(botId, entries);

    /** Every page of getBotLogs for the query, in order. */
    async function walk(
      c: Client,
      query: Parameters<Client['getBotLogs']>[0],
    ): Promise<{ pages: Log[][]; tokens: number }> {
      const pages: Log[][] = [];
      let tokens = 0;
      let nextToken: string | undefined;
      do {
        const res = await c.getBotLogs({ ...query, nextToken });
        assert.equal('meta' in res, false, 'getBotLogs has no meta: nextToken is at the top level');
        pages.push(res.logs);
        nextToken = res.nextToken;
        if (nextToken) tokens++;
      } while (nextToken);
      return { pages, tokens };
    }

    test('lines written by the runtime come back from getBotLogs with their fields', async () => {
      const { client, botId } = await freshBot('fields');
      const t1 = at(-3000);
      const t2 = at(-2000);
      const t3 = at(-1000);
      await write(botId, [
        { level: 'info', message: 'hello', timestamp: t1, conversationId: 'conv_1', userId: 'user_1' },
        { level: 'error', message: 'hook failed', timestamp: t2, workflowId: 'wfl_1' },
      ]);
      await write(botId, [{ level: 'debug', message: 'plain', timestamp: t3 }]);
      await write(botId, []);

      const res = await client.getBotLogs({ id: botId, timeStart: at(-60_000) });
      assert.deepEqual(res, {
        logs: [
          { timestamp: t1, level: 'info', message: 'hello', conversationId: 'conv_1', userId: 'user_1' },
          { timestamp: t2, level: 'error', message: 'hook failed', workflowId: 'wfl_1' },
          { timestamp: t3, level: 'debug', message: 'plain' },
        ],
      });
      assert.equal('nextToken' in res, false, 'no more pages: no nextToken');

      // Without a timestamp, a line is stamped when written.
      const before = new Date().toISOString();
      await write(botId, [{ level: 'warn', message: 'now' }]);
      const last = (await client.getBotLogs({ id: botId, timeStart: before })).logs;
      assert.equal(last.length, 1);
      assert.equal(last[0]?.message, 'now');
      assert.ok((last[0]?.timestamp ?? '') >= before);
      assert.match(last[0]?.timestamp ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    });

    test('a long message is capped', async () => {
      const { client, botId } = await freshBot('long');
      await write(botId, [{ level: 'info', message: 'x'.repeat(10_000) }]);
      const [log] = (await client.getBotLogs({ id: botId, timeStart: at(-60_000) })).logs;
      assert.equal(log?.message.length, 4000);
      assert.ok(log?.message.endsWith('…'));
    });

    test('filters: time window, level, conversation, user, workflow, message text', async () => {
      const { client, botId } = await freshBot('filters');
      const base = Date.now() - 60_000;
      const ts = (s: number) => new Date(base + s * 1000).toISOString();
      await write(botId, [
        { level: 'debug', message: 'starting up', timestamp: ts(0) },
        { level: 'info', message: 'User said Hello', timestamp: ts(1), conversationId: 'c1', userId: 'u1' },
        { level: 'warn', message: 'slow reply', timestamp: ts(2), conversationId: 'c1', userId: 'u2' },
        { level: 'error', message: 'action timed out', timestamp: ts(3), conversationId: 'c2', userId: 'u1' },
        { level: 'info', message: '100% done_ok', timestamp: ts(4), workflowId: 'w1' },
      ]);
      const messages = async (query: Omit<Parameters<Client['getBotLogs']>[0], 'id'>) =>
        (await client.getBotLogs({ id: botId, ...query })).logs.map((l) => l.message);
      const all = ['starting up', 'User said Hello', 'slow reply', 'action timed out', '100% done_ok'];

      assert.deepEqual(await messages({ timeStart: ts(-1) }), all);
      assert.deepEqual(
        await messages({ timeStart: ts(1), timeEnd: ts(3) }),
        all.slice(1, 4),
        'both ends inclusive',
      );
      assert.deepEqual(await messages({ timeStart: ts(3.5) }), ['100% done_ok']);
      assert.deepEqual(await messages({ timeStart: ts(10) }), []);
      assert.deepEqual(await messages({ timeStart: ts(3), timeEnd: ts(1) }), [], 'an empty window');

      assert.deepEqual(await messages({ timeStart: ts(-1), level: 'info' }), [
        'User said Hello',
        '100% done_ok',
      ]);
      assert.deepEqual(
        await messages({ timeStart: ts(-1), level: 'warn' }),
        ['slow reply'],
        'exactly that level',
      );
      assert.deepEqual(await messages({ timeStart: ts(-1), level: 'error' }), ['action timed out']);

      assert.deepEqual(await messages({ timeStart: ts(-1), conversationId: 'c1' }), [
        'User said Hello',
        'slow reply',
      ]);
      assert.deepEqual(await messages({ timeStart: ts(-1), userId: 'u1' }), [
        'User said Hello',
        'action timed out',
      ]);
      assert.deepEqual(await messages({ timeStart: ts(-1), workflowId: 'w1' }), ['100% done_ok']);
      assert.deepEqual(
        await messages({ timeStart: ts(-1), conversationId: 'c1', userId: 'u1', level: 'info' }),
        ['User said Hello'],
      );

      assert.deepEqual(await messages({ timeStart: ts(-1), messageContains: 'reply' }), ['slow reply']);
      assert.deepEqual(await messages({ timeStart: ts(-1), messageContains: 'Hello' }), ['User said Hello']);
      assert.deepEqual(await messages({ timeStart: ts(-1), messageContains: 'hello' }), [], 'case-sensitive');
      assert.deepEqual(
        await messages({ timeStart: ts(-1), messageContains: '%' }),
        ['100% done_ok'],
        'no LIKE wildcards',
      );
      assert.deepEqual(await messages({ timeStart: ts(-1), messageContains: '_' }), ['100% done_ok']);
    });

    test('250 lines come in pages with a top-level nextToken, each line once, oldest first', async () => {
      const { client, botId } = await freshBot('pages');
      const base = Date.now() - 120_000;
      // Ten lines share each millisecond: ties are served in the order they were written.
      const entries: BotLogEntry[] = Array.from({ length: 250 }, (_, i) => ({
        level: 'info',
        message: `line ${String(i).padStart(3, '0')}`,
        timestamp: new Date(base + Math.floor(i / 10)).toISOString(),
      }));
      await write(botId, entries);
      const { pages, tokens } = await walk(client, { id: botId, timeStart: new Date(base).toISOString() });
      assert.deepEqual(
        pages.map((p) => p.length),
        [100, 100, 50],
      );
      assert.equal(tokens, 2);
      assert.deepEqual(
        pages.flat().map((l) => l.message),
        entries.map((e) => e.message),
      );

      // Lines written while a walk is under way are served too, once.
      const first = await client.getBotLogs({ id: botId, timeStart: new Date(base).toISOString() });
      await write(botId, [{ level: 'info', message: 'late' }]);
      let nextToken = first.nextToken;
      const rest: string[] = [];
      while (nextToken) {
        const res = await client.getBotLogs({
          id: botId,
          timeStart: new Date(base).toISOString(),
          nextToken,
        });
        rest.push(...res.logs.map((l) => l.message));
        nextToken = res.nextToken;
      }
      assert.deepEqual(
        [...first.logs.map((l) => l.message), ...rest],
        [...entries.map((e) => e.message), 'late'],
      );
    });

    test('lines the runtime logs are stored within a second, and a read in the process sees them at once', async () => {
      const { client, botId } = await freshBot('behind');
      t.server.domain.botLogs.append(botId, [
        { level: 'info', message: 'first' },
        { level: 'warn', message: 'second' },
      ]);
      const read = await client.getBotLogs({ id: botId, timeStart: at(-60_000) });
      assert.deepEqual(
        read.logs.map((l) => [l.level, l.message]),
        [
          ['info', 'first'],
          ['warn', 'second'],
        ],
      );

      // No read this time: the batch is written on its own.
      t.server.domain.botLogs.append(botId, [{ level: 'info', message: 'third' }]);
      const stored = async () =>
        (
          await t.server.store.db
            .selectFrom('bot_logs')
            .select('message')
            .where('bot_id', '=', botId)
            .where('message', '=', 'third')
            .execute()
        ).length;
      const deadline = Date.now() + 1000;
      while ((await stored()) === 0 && Date.now() < deadline) await sleep(25);
      assert.equal(await stored(), 1, 'the line is in the store within a second');
    });

    test("lines of a bot that does not exist are dropped, and the other bots' lines of their batch stored", async () => {
      const { client, botId } = await freshBot('neighbour');
      // The same batch: the lines wait together until the read writes them.
      t.server.domain.botLogs.append('bot_01J00000000000000000000000', [
        { level: 'info', message: 'orphan' },
      ]);
      t.server.domain.botLogs.append(botId, [{ level: 'info', message: 'kept' }]);
      const read = await client.getBotLogs({ id: botId, timeStart: at(-60_000) });
      assert.deepEqual(
        read.logs.map((l) => l.message),
        ['kept'],
      );
      // Nothing of the refused batch is written again later.
      t.server.domain.botLogs.append(botId, [{ level: 'info', message: 'later' }]);
      const again = await client.getBotLogs({ id: botId, timeStart: at(-60_000) });
      assert.deepEqual(
        again.logs.map((l) => l.message),
        ['kept', 'later'],
      );
    });

    test('a large batch is stored whole', async () => {
      const { botId } = await freshBot('batch');
      await write(
        botId,
        Array.from({ length: 2500 }, (_, i) => ({ level: 'debug' as const, message: `n${i}` })),
      );
      const rows = await t.server.store.db
        .selectFrom('bot_logs')
        .select('id')
        .where('bot_id', '=', botId)
        .execute();
      assert.equal(rows.length, 2500);
    });

    test('a bad request is InvalidPayload', async () => {
      const { client, workspaceId, botId } = await freshBot('bad');
      await assert.rejects(client.getBotLogs({ id: botId, timeStart: 'yesterday-ish' }), InvalidPayloadError);
      await assert.rejects(
        client.getBotLogs({ id: botId, timeStart: at(-1000), timeEnd: 'not a date' }),
        InvalidPayloadError,
      );
      await assert.rejects(
        client.getBotLogs({ id: botId, timeStart: at(-1000), nextToken: 'garbage' }),
        InvalidPayloadError,
      );
      const missing = await fetch(`${t.url}/v1/admin/bots/${botId}/logs`, {
        headers: { authorization: `Bearer ${t.token}`, 'x-workspace-id': workspaceId },
      });
      assert.equal(missing.status, 400, 'timeStart is required');
      assert.equal(((await missing.json()) as { type: string }).type, 'InvalidPayload');
    });

    test("another workspace's bot, or no bot, is ResourceNotFound", async () => {
      const mine = await freshBot('mine');
      const theirs = await freshBot('theirs');
      await write(theirs.botId, [{ level: 'info', message: 'secret stuff' }]);
      await assert.rejects(
        mine.client.getBotLogs({ id: theirs.botId, timeStart: at(-60_000) }),
        ResourceNotFoundError,
      );
      await assert.rejects(
        mine.client.getBotLogs({ id: 'bot_01J00000000000000000000000', timeStart: at(-60_000) }),
        ResourceNotFoundError,
      );
    });

    test('a viewer can read logs', async () => {
      const { client, workspaceId, botId } = await freshBot('viewer');
      await write(botId, [{ level: 'info', message: 'visible' }]);
      const email = `logs-viewer-${++emailCounter}@example.com`;
      await client.createWorkspaceMember({ email, role: 'viewer' });
      const account = await t.server.domain.accounts.findByEmail(email);
      assert.ok(account);
      const token = (await t.server.domain.accounts.createToken(account.id, 'viewer')).value;
      const viewer = t.client({ token, workspaceId });
      const res = await viewer.getBotLogs({ id: botId, timeStart: at(-60_000) });
      assert.deepEqual(
        res.logs.map((l) => l.message),
        ['visible'],
      );
    });

    test('pruneOlderThan deletes old lines only; deleting the bot deletes its lines', async () => {
      const { client, botId } = await freshBot('prune');
      await write(botId, [
        { level: 'info', message: 'old', timestamp: at(-3 * 86_400_000) },
        { level: 'info', message: 'new', timestamp: at(-1000) },
      ]);
      const deleted = await t.server.domain.botLogs.pruneOlderThan(new Date(Date.now() - 86_400_000));
      assert.ok(deleted >= 1);
      const res = await client.getBotLogs({ id: botId, timeStart: at(-7 * 86_400_000) });
      assert.deepEqual(
        res.logs.map((l) => l.message),
        ['new'],
      );
      await client.deleteBot({ id: botId });
      const left = await t.server.store.db
        .selectFrom('bot_logs')
        .select('id')
        .where('bot_id', '=', botId)
        .execute();
      assert.deepEqual(left, []);
    });

    test('the sweep keeps each bot’s newest lines within PARLEY_BOT_LOG_MAX_LINES and its retention', async () => {
      const small = await startTestServer(store, { botLogMaxLines: '5', botLogRetentionDays: '2' });
      try {
        const { bot } = await small.client().createBot({ name: 'chatty' });
        const { bot: quiet } = await small.client().createBot({ name: 'quiet' });
        await small.server.domain.botLogs.write(
          bot.id,
          Array.from({ length: 12 }, (_, i) => ({
            level: 'info' as const,
            message: `line ${i}`,
            timestamp: at(-60_000 + i * 1000),
          })),
        );
        await small.server.domain.botLogs.write(quiet.id, [
          { level: 'info', message: 'too old', timestamp: at(-3 * 86_400_000) },
          { level: 'info', message: 'recent', timestamp: at(-1000) },
        ]);
        await small.server.sweeper.prune();
        const kept = await small.client().getBotLogs({ id: bot.id, timeStart: at(-7 * 86_400_000) });
        assert.deepEqual(kept.logs.map((l) => l.message).sort(), [
          'line 10',
          'line 11',
          'line 7',
          'line 8',
          'line 9',
        ]);
        const quietKept = await small.client().getBotLogs({ id: quiet.id, timeStart: at(-7 * 86_400_000) });
        assert.deepEqual(
          quietKept.logs.map((l) => l.message),
          ['recent'],
        );
      } finally {
        await small.close();
      }
    });

    test('parley logs prints lines; --follow prints new ones, each once', async () => {
      const { workspaceId, botId } = await freshBot('cli');
      const env = { PARLEY_URL: t.url, PARLEY_TOKEN: t.token, PARLEY_WORKSPACE_ID: workspaceId };
      const t1 = at(-5000);
      const t2 = at(-4000);
      const t3 = at(-3000);
      await write(botId, [
        { level: 'info', message: 'hello there', timestamp: t1, conversationId: 'conv_a' },
        { level: 'warn', message: 'twice', timestamp: t2 },
        { level: 'warn', message: 'twice', timestamp: t2 },
        { level: 'error', message: 'line one\nline two \u001b[31mred', timestamp: t3 },
      ]);

      const once = runParley(['logs', botId], env);
      assert.equal(await once.exited, 0, once.output());
      assert.equal(
        once.output(),
        [
          `${t1} INFO [conversation conv_a] hello there`,
          `${t2} WARN twice`,
          `${t2} WARN twice`,
          // Continuation lines are indented; escape sequences are shown, not played.
          `${t3} ERROR line one`,
          `    line two \\x1b[31mred`,
          '',
        ].join('\n'),
      );

      const filtered = runParley(['logs', botId, '--level', 'warn', '--since', '1m'], env);
      assert.equal(await filtered.exited, 0, filtered.output());
      assert.equal(filtered.output(), `${t2} WARN twice\n${t2} WARN twice\n`);

      const follow = runParley(['logs', botId, '--follow'], env);
      try {
        await follow.waitFor(/line two/);
        await write(botId, [{ level: 'info', message: 'written later', conversationId: 'conv_b' }]);
        await follow.waitFor(/INFO \[conversation conv_b\] written later\n/);
        // Stored after a newer line, but stamped before it: still shown, once.
        await write(botId, [{ level: 'debug', message: 'stored late', timestamp: at(-2000) }]);
        await follow.waitFor(/DEBUG stored late\n/);
        await sleep(2500); // a few more polls over the same window
        const out = follow.output();
        const count = (text: string) => out.split('\n').filter((l) => l.endsWith(text)).length;
        assert.equal(count(' hello there'), 1, out);
        assert.equal(count(' WARN twice'), 2, out);
        assert.equal(count(' line one'), 1, out);
        assert.equal(count(' written later'), 1, out);
        assert.equal(count(' stored late'), 1, out);
        assert.match(out, new RegExp(`^${escape(t1)} INFO \\[conversation conv_a\\] hello there$`, 'm'));
      } finally {
        follow.child.kill('SIGTERM');
      }
      assert.equal(await follow.exited, 0, follow.output());
    });

    test('parley logs reports a bot it cannot read', async () => {
      const { workspaceId } = await freshBot('cli-missing');
      const env = { PARLEY_URL: t.url, PARLEY_TOKEN: t.token, PARLEY_WORKSPACE_ID: workspaceId };
      const proc = runParley(['logs', 'bot_nope', '--follow'], env);
      assert.equal(await proc.exited, 1);
      assert.match(proc.output(), /ResourceNotFound/);
      const noToken = runParley(['logs', 'bot_nope'], { PARLEY_URL: t.url });
      assert.equal(await noToken.exited, 1);
      assert.match(noToken.output(), /PARLEY_TOKEN/);
    });
  });
}
