// getBotAnalytics: a bot's activity per period, through the official client (and plain HTTP for Parley's
// `interval`), from what the store holds: messages, users, events, trackAnalytics counters and turns.
import type { Row } from '../src/store/schema.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ForbiddenError,
  InvalidQueryError,
  ResourceNotFoundError,
  UnauthorizedError,
} from '@botpress/client';
import type { Client } from '@botpress/client';
import { newId } from '../src/domain/shared/ids.ts';
import { deployPackage, json, sendAndWait, startChat } from './helpers/deployed-bots.ts';
import { rejectsWith, sleep } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import type { EventStatus } from '../src/value-sets.ts';

type AnalyticsRecord = Awaited<ReturnType<Client['getBotAnalytics']>>['records'][number] & {
  turns: { count: number; failed: number; durationMs: { p50: number | null; p99: number | null } };
};

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

for (const store of await testStores()) {
  describe(`Admin API: bot analytics (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t.close());

    /** getBotAnalytics over plain HTTP, for the query parameters the official client does not send. */
    async function analytics(
      botId: string,
      query: Record<string, string>,
    ): Promise<{ status: number; body: { records: AnalyticsRecord[]; type?: string; message?: string } }> {
      const res = await fetch(
        `${t.url}/v1/admin/bots/${botId}/analytics?${new URLSearchParams(query).toString()}`,
        {
          headers: { authorization: `Bearer ${t.token}`, 'x-workspace-id': t.workspaceId },
        },
      );
      return { status: res.status, body: (await res.json()) as never };
    }

    test('one record per day by default: messages, sessions, users, events and custom counters', async () => {
      const admin = t.client();
      const { bot } = await admin.createBot({ name: 'counted' });
      // A member's personal token reaches the bot's Runtime API with x-bot-id.
      const runtime = t.client({ botId: bot.id, workspaceId: undefined });
      const start = Date.now() - 1000;
      const { user: ada } = await runtime.createUser({ tags: {} });
      const { user: bob } = await runtime.createUser({ tags: {} });
      const { conversation: c1 } = await runtime.createConversation({ channel: 'channel', tags: {} });
      const { conversation: c2 } = await runtime.createConversation({ channel: 'channel', tags: {} });
      const text = (conversationId: string, userId: string, said: string) =>
        runtime.createMessage({ conversationId, userId, type: 'text', payload: { text: said }, tags: {} });
      await text(c1.id, ada.id, 'hello');
      await text(c1.id, ada.id, 'again');
      await text(c2.id, bob.id, 'hi');
      await text(c1.id, bot.id, 'a reply');
      await runtime.createEvent({ type: 'custom:ping', payload: {}, conversationId: c1.id });
      await runtime.trackAnalytics({ name: 'greetings', count: 2 });
      await runtime.trackAnalytics({ name: 'greetings', count: 3 });

      const { records } = (await admin.getBotAnalytics({
        id: bot.id,
        startDate: iso(start),
        endDate: iso(Date.now() + 1000),
      })) as { records: AnalyticsRecord[] };
      assert.equal(records.length, 1, 'the window is shorter than a day');
      const [record] = records as [AnalyticsRecord];
      assert.equal(record.startDateTimeUtc, iso(start));
      assert.ok(record.endDateTimeUtc > record.startDateTimeUtc);
      assert.equal(record.userMessages, 3);
      assert.equal(record.messages, 3, 'the deprecated field is userMessages');
      assert.equal(record.botMessages, 1);
      assert.equal(record.sessions, 2);
      assert.equal(record.newUsers, 2);
      assert.equal(record.returningUsers, 0);
      assert.deepEqual(record.eventTypes, { message_created: 3, 'custom:ping': 1 });
      assert.equal(record.events, 4);
      assert.deepEqual(record.customEvents, { greetings: 5 });
      assert.equal(record.llm.calls, 0);
      assert.deepEqual(record.turns, { count: 0, failed: 0, durationMs: { p50: null, p99: null } });

      // Periods are cut from startDate; empty ones are there too, with zeros.
      const days = await admin.getBotAnalytics({
        id: bot.id,
        startDate: iso(start - 2 * 24 * HOUR),
        endDate: iso(Date.now() + 1000),
      });
      assert.equal(days.records.length, 3);
      assert.deepEqual(
        days.records.map((r) => r.userMessages),
        [0, 0, 3],
      );
      assert.equal(days.records[0]?.startDateTimeUtc, iso(start - 2 * 24 * HOUR));
      assert.equal(days.records[0]?.endDateTimeUtc, iso(start - 24 * HOUR - 1), 'inclusive end');
    });

    test('returning users wrote in the period but were created before it', async () => {
      const admin = t.client();
      const { bot } = await admin.createBot({ name: 'returning' });
      const runtime = t.client({ botId: bot.id, workspaceId: undefined });
      const { user: old } = await runtime.createUser({ tags: {} });
      const { conversation } = await runtime.createConversation({ channel: 'channel', tags: {} });
      await sleep(20);
      const start = Date.now();
      await sleep(5);
      const { user: fresh } = await runtime.createUser({ tags: {} });
      for (const userId of [old.id, old.id, fresh.id]) {
        await runtime.createMessage({
          conversationId: conversation.id,
          userId,
          type: 'text',
          payload: { text: 'x' },
          tags: {},
        });
      }
      const { records } = await admin.getBotAnalytics({
        id: bot.id,
        startDate: iso(start),
        endDate: iso(Date.now() + 1000),
      });
      assert.equal(records[0]?.returningUsers, 1);
      assert.equal(records[0]?.newUsers, 1);
    });

    test('turns: how many finished, failed, and the nearest-rank p50 and p99 of their durations', async () => {
      const { bot } = await t.client().createBot({ name: 'timed' });
      // Turn durations are what the engine records (queued at created_at, done at updated_at): written
      // here with exact values, so the percentiles can be checked to the millisecond.
      const base = Date.now() - 3 * HOUR;
      const event = (
        createdAt: number,
        ms: number,
        status: EventStatus,
        scheduledFor?: number,
      ): Row<'events'> => ({
        id: newId('event'),
        bot_id: bot.id,
        workspace_id: t.workspaceId,
        type: 'message_created',
        payload: '{}',
        conversation_id: null,
        user_id: null,
        message_id: null,
        workflow_id: null,
        status,
        failure_reason: status === 'failed' ? 'boom' : null,
        scheduled_for: scheduledFor === undefined ? null : iso(scheduledFor),
        lease_owner: null,
        lease_until: null,
        attempts: 0,
        deliveries: 0,
        created_at: iso(createdAt),
        updated_at: iso((scheduledFor ?? createdAt) + ms),
      });
      const rows: ReturnType<typeof event>[] = [];
      // First hour: 100 turns of 1..100 ms, in shuffled order, 3 of them failed.
      const durations = Array.from({ length: 100 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
      durations.forEach((ms, i) => rows.push(event(base + i * 1000, ms, i < 3 ? 'failed' : 'processed')));
      // Not turns: still pending, ignored, scheduled for later.
      rows.push(event(base + 200_000, 5000, 'pending'), event(base + 201_000, 5000, 'ignored'));
      // Second hour: one scheduled turn, timed from when it was due.
      rows.push(event(base + HOUR + 10, 40, 'processed', base + HOUR + 60_000));
      await t.server.store.db.insertInto('events').values(rows).execute();

      const { status, body } = await analytics(bot.id, {
        startDate: iso(base),
        endDate: iso(base + 3 * HOUR),
        interval: 'hour',
      });
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(
        body.records.map((r) => r.turns),
        [
          { count: 100, failed: 3, durationMs: { p50: 50, p99: 99 } },
          { count: 1, failed: 0, durationMs: { p50: 40, p99: 40 } },
          { count: 0, failed: 0, durationMs: { p50: null, p99: null } },
        ],
      );
      assert.deepEqual(
        body.records.map((r) => r.events),
        [102, 1, 0],
      );
      assert.deepEqual(
        body.records.map((r) => r.startDateTimeUtc),
        [iso(base), iso(base + HOUR), iso(base + 2 * HOUR)],
      );
    });

    test('turns of a deployed bot: a failed turn is counted as failed', async () => {
      const bot = await deployPackage(t, {
        'bot.json': json({ formatVersion: 1, name: 'sometimes-fails' }),
        'workflows/main.json': json({
          nodes: [
            { id: 'start', type: 'start', next: 'reply' },
            {
              id: 'reply',
              type: 'standard',
              cards: [
                { type: 'code', code: "if (event.preview === 'fail') throw new Error('asked to fail');\n" },
                { type: 'say', message: { type: 'text', text: 'ok' } },
              ],
            },
          ],
        }),
      });
      const start = Date.now() - 1000;
      const chat = await startChat(bot);
      assert.equal((await sendAndWait(bot, chat, 'hello')).status, 'processed');
      assert.equal((await sendAndWait(bot, chat, 'fail')).status, 'failed');
      const { records } = (await t
        .client()
        .getBotAnalytics({ id: bot.botId, startDate: iso(start), endDate: iso(Date.now() + 1000) })) as {
        records: AnalyticsRecord[];
      };
      const turns = records[0]?.turns;
      assert.equal(turns?.count, 2);
      assert.equal(turns?.failed, 1);
      assert.ok(typeof turns?.durationMs.p50 === 'number' && turns.durationMs.p50 >= 0);
      assert.ok((turns?.durationMs.p99 ?? -1) >= (turns?.durationMs.p50 ?? 0));
      assert.equal(records[0]?.userMessages, 2);
      // The failed turn's one message is the bot's fallback message (on by default), never its "ok".
      assert.equal(records[0]?.botMessages, 2, 'the reply to "hello" and the fallback message');
    });

    test('bad windows are an InvalidQuery naming the field', async () => {
      const admin = t.client();
      const { bot } = await admin.createBot({ name: 'windows' });
      const now = Date.now();
      await rejectsWith(
        admin.getBotAnalytics({ id: bot.id, startDate: iso(now), endDate: iso(now - 1000) }),
        InvalidQueryError,
        /endDate must be after startDate/,
      );
      await rejectsWith(
        admin.getBotAnalytics({ id: bot.id, startDate: 'yesterday', endDate: iso(now) }),
        InvalidQueryError,
        /startDate/,
      );
      const tooMany = await analytics(bot.id, {
        startDate: iso(now - 30 * 24 * HOUR),
        endDate: iso(now),
        interval: 'hour',
      });
      assert.equal(tooMany.status, 400);
      assert.equal(tooMany.body.type, 'InvalidQuery');
      assert.match(tooMany.body.message ?? '', /720 periods of one hour; at most 400/);
      const badInterval = await analytics(bot.id, {
        startDate: iso(now - HOUR),
        endDate: iso(now),
        interval: 'week',
      });
      assert.equal(badInterval.status, 400);
      assert.match(badInterval.body.message ?? '', /interval/);
    });

    test("another workspace's bot is not found; a viewer may read; no token is 401", async () => {
      const admin = t.client();
      const other = await admin.createWorkspace({ name: 'elsewhere' });
      const { bot } = await t.client({ workspaceId: other.id }).createBot({ name: 'hidden' });
      const window = { startDate: iso(Date.now() - HOUR), endDate: iso(Date.now()) };
      await assert.rejects(admin.getBotAnalytics({ id: bot.id, ...window }), ResourceNotFoundError);

      const { bot: mine } = await admin.createBot({ name: 'mine' });
      const email = `viewer-${Date.now()}@example.com`;
      await admin.createWorkspaceMember({ email, role: 'viewer' });
      const account = await t.server.domain.accounts.findByEmail(email);
      assert.ok(account);
      const pat = await t.server.domain.accounts.createToken(account.id, 'viewer');
      const viewer = t.client({ token: pat.value });
      assert.equal((await viewer.getBotAnalytics({ id: mine.id, ...window })).records.length, 1);
      await assert.rejects(viewer.createBot({ name: 'nope' }), ForbiddenError);
      await assert.rejects(
        t.client({ token: 'bp_pat_nope' }).getBotAnalytics({ id: mine.id, ...window }),
        UnauthorizedError,
      );
    });
  });
}
