// One workspace's flood of queued messages does not hold up another workspace's replies: the engine
// takes work round robin across workspaces, each within its share of the turns (engine/leased-work.ts).
// Real `parley serve` processes (several may share a PostgreSQL database), the echo bot in each workspace,
// the official chat client for the timed user and plain fetch for the flood (as fast as the API takes it).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client } from '@botpress/client';
import { ChatSession, deployWithCli, textOf } from '../helpers/chat-bots.ts';
import { waitFor } from '../helpers/runtime.ts';
import { ServeProcesses } from '../helpers/serve-processes.ts';
import type { ServedProcess } from '../helpers/serve-processes.ts';
import type { TestStore } from '../helpers/stores.ts';

/** The flood: this many conversations of the noisy workspace, each sent this many messages. */
const FLOOD_CONVERSATIONS = 200;
const FLOOD_PER_CONVERSATION = 10;
const FLOOD = FLOOD_CONVERSATIONS * FLOOD_PER_CONVERSATION;
/** Requests of the flood in flight at once. */
const FLOOD_CONCURRENCY = 32;
/** Round trips of the quiet workspace timed, idle and then behind the flood. */
const ROUND_TRIPS = 5;
/**
 * What share of the events queued when a quiet round trip begins may be worked off before its reply comes.
 * Queued behind the flood, the quiet message waits for every event before it (a share of 1); taken round
 * robin across workspaces, it waits for a turn of the noisy workspace's share at most (measured 1 to 8% on
 * SQLite and PostgreSQL, on a 2-core machine). A count of events, not milliseconds: a slow or shared machine
 * makes every turn slower but does not change the order in which they come. The times are printed.
 */
const WORKED_OFF_AT_MOST = 0.5;
/** The flood must still be queued when the quiet workspace's last reply came: else the test proves nothing. */
const BACKLOG_LEFT_AT_LEAST = FLOOD / 4;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Pending events of the whole store (`parley_queue_depth` of /metrics). */
async function queueDepth(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^parley_queue_depth (\S+)$/m.exec(text)?.[1] ?? NaN);
}

/** Turns taken by all `urls` (`parley_turn_duration_seconds_count` of each one's /metrics, all outcomes). */
async function turnsTaken(urls: string[]): Promise<number> {
  let turns = 0;
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const [, count] of text.matchAll(/^parley_turn_duration_seconds_count(?:\{[^}]*\})? (\S+)$/gm))
      turns += Number(count);
  }
  return turns;
}

/** Runs `tasks` with at most `limit` at once. */
async function inParallel(limit: number, tasks: (() => Promise<void>)[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) await tasks[next++]?.();
    }),
  );
}

/** A Chat API request as JSON; fails the test on any other answer than `status`. */
async function chatRequest<T>(
  url: string,
  body: unknown,
  userKey: string | undefined,
  status: number,
): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(userKey !== undefined && { 'x-user-key': userKey }) },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, status, `${url}: ${await res.clone().text()}`);
  return (await res.json()) as T;
}

/** The scenario, on `processes` servers of one store. */
export function fairShareSuite(store: TestStore, processes: number): void {
  describe(
    `one workspace's flood of messages and another's replies (${store.name}, ${processes} process${processes > 1 ? 'es' : ''})`,
    { skip: store.skip },
    () => {
      const servers = new ServeProcesses(store, 'fair');
      const { token } = servers;
      const sessions: ChatSession[] = [];
      after(async () => {
        for (const session of sessions) await session.close();
        await servers.close();
      });

      test(`${FLOOD} queued messages of one workspace: the other's echo does not wait for them, and every message is answered`, async () => {
        // Processes of their own folders, sharing the PostgreSQL schema (on SQLite there is one).
        const running: ServedProcess[] = [];
        // The flood is deeper than admission control lets a queue grow (test/admission.test.ts): this
        // is the engine's share of a backlog an operator allowed, with admission off.
        for (let i = 0; i < processes; i++)
          running.push(
            await servers.serve({ dataDir: await servers.newDataDir(), env: { PARLEY_ADMISSION: 'off' } }),
          );
        const first = running[0] as ServedProcess;
        const [, quietWorkspace] = await first.proc.waitFor(/workspace id: (\S+)/);
        assert.ok(quietWorkspace);
        const owner = new Client({ apiUrl: first.url, token, workspaceId: quietWorkspace });
        const noisyWorkspace = await owner.createWorkspace({ name: 'noisy' });
        const quiet = await deployWithCli(
          { url: first.url, token, workspaceId: quietWorkspace },
          'examples/echo-bot',
        );
        // The noisy bot gets its code once its flood is queued: the whole flood waits at once, however
        // fast this machine takes messages and runs turns.
        const noisyAdmin = new Client({ apiUrl: first.url, token, workspaceId: noisyWorkspace.id });
        const { bot: noisy } = await noisyAdmin.createBot({ name: 'noisy' });
        const noisyWebhook = noisy.integrations.chat?.webhookUrl;
        assert.ok(noisyWebhook);
        /** A bot's chat URL on each server. */
        const on = (webhookUrl: string) => running.map((s) => s.url + new URL(webhookUrl).pathname);

        // The quiet workspace's user, timed while nothing else runs.
        const talk = await ChatSession.open(on(quiet.webhookUrl).at(-1) as string);
        sessions.push(talk);
        const roundTrip = async (text: string): Promise<number> => {
          const started = performance.now();
          await talk.say(text);
          assert.deepEqual((await talk.nextReplies(1, 60_000)).map(textOf), [`You said: ${text}`]);
          return performance.now() - started;
        };
        await roundTrip('warm up');
        const idle: number[] = [];
        for (let i = 0; i < ROUND_TRIPS; i++) idle.push(await roundTrip(`idle ${i}`));

        // The noisy workspace's users open their conversations, then queue the flood over the servers.
        const noisyUrls = on(noisyWebhook);
        // As many requests at once as the flood's (one client address may hold only so many connections).
        const floods: { url: string; key: string; conversationId: string }[] = [];
        await inParallel(
          FLOOD_CONCURRENCY,
          Array.from({ length: FLOOD_CONVERSATIONS }, (_, i) => async () => {
            const url = noisyUrls[i % noisyUrls.length] as string;
            const { key } = await chatRequest<{ key: string }>(`${url}/users`, {}, undefined, 201);
            const { conversation } = await chatRequest<{ conversation: { id: string } }>(
              `${url}/conversations`,
              {},
              key,
              201,
            );
            floods[i] = { url, key, conversationId: conversation.id };
          }),
        );
        const floodStarted = performance.now();
        await inParallel(
          FLOOD_CONCURRENCY,
          Array.from({ length: FLOOD }, (_, n) => async () => {
            const { url, key, conversationId } = floods[n % FLOOD_CONVERSATIONS] as (typeof floods)[number];
            const payload = { type: 'text', text: `flood ${n}` };
            await chatRequest(`${url}/messages`, { conversationId, payload }, key, 201);
          }),
        );
        const queuedIn = performance.now() - floodStarted;
        const urls = running.map((s) => s.url);
        /** Turns taken before the noisy bot has code: the quiet workspace's, counted from here on. */
        const turnsBefore = await turnsTaken(urls);
        await deployWithCli({ url: first.url, token, workspaceId: noisyWorkspace.id }, 'examples/echo-bot', [
          '--bot-id',
          noisy.id,
        ]);
        // Its turns have begun: the quiet workspace's messages come behind thousands of its events.
        await waitFor(
          'the flood to be worked on',
          async () => (await queueDepth(first.url)) < FLOOD,
          60_000,
          20,
        );

        const behind: number[] = [];
        /** The share of the events queued at each quiet message's send that was worked off before its reply. */
        const workedOff: number[] = [];
        /** The flood's turns so far: all turns since the noisy bot had code, less the quiet ones among them. */
        const floodTurns = async (quietTurns: number) => (await turnsTaken(urls)) - turnsBefore - quietTurns;
        for (let i = 0; i < ROUND_TRIPS; i++) {
          const done = await floodTurns(i);
          behind.push(await roundTrip(`behind ${i}`));
          workedOff.push(((await floodTurns(i + 1)) - done) / (FLOOD - done));
        }
        const left = await queueDepth(first.url);
        console.log(
          `${store.name}, ${processes} process(es): ${FLOOD} messages queued in ${Math.round(queuedIn)} ms; quiet round trips idle ${idle.map(Math.round).join(', ')} ms, behind the flood ${behind.map(Math.round).join(', ')} ms (${workedOff.map((share) => `${Math.round(share * 100)}%`).join(', ')} of the queue worked off meanwhile), with ${left} events still queued (printed)`,
        );
        assert.ok(left >= BACKLOG_LEFT_AT_LEAST, `the flood was still queued (${left} events left)`);
        assert.ok(
          Math.max(...workedOff) <= WORKED_OFF_AT_MOST,
          `a quiet reply waited for ${Math.round(Math.max(...workedOff) * 100)}% of the queued flood (slowest round trip ${Math.round(Math.max(...behind))} ms, idle ${Math.round(median(idle))} ms)`,
        );

        // Every message of the flood is answered in the end.
        const drainStarted = performance.now();
        await waitFor(
          'the flood to be worked off',
          async () => (await queueDepth(first.url)) === 0,
          300_000,
          500,
        );
        console.log(
          `${store.name}: the rest of the flood was answered in ${Math.round(performance.now() - drainStarted)} ms (printed)`,
        );
        const runtime = new Client({
          apiUrl: first.url,
          token,
          workspaceId: noisyWorkspace.id,
          botId: noisy.id,
        });
        const processed = await runtime.list.events({ status: 'processed' }).collect();
        assert.equal(processed.length, FLOOD, 'every message of the flood had its turn');
        const { conversations } = await runtime.listConversations({});
        assert.ok(conversations.length > 0);
        const replies = (
          await runtime.list.messages({ conversationId: conversations[0]?.id ?? '' }).collect()
        )
          .filter((m) => m.direction === 'outgoing')
          .map((m) => (m.payload as { text: string }).text);
        assert.equal(replies.length, FLOOD_PER_CONVERSATION, 'each message of a conversation was answered');
      });
    },
  );
}
