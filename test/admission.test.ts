// Admission control (issue 37): while more events wait for a turn than PARLEY_ADMISSION_BACKLOG, a new
// message of the workspace holding its share of that queue is refused with 429 RateLimited and
// Retry-After, before it is stored; every message acknowledged is answered; another workspace under its
// share is still admitted; /metrics counts both. A chat message or event is refused as it arrives, before its
// user is read (no statement), and what was let in at the door is left however the request ends.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { deployWithCli } from './helpers/chat-bots.ts';
import { lockedFromOutside as lockedOutside } from './helpers/held-rows.ts';
import { json, writePackage } from './helpers/deployed-bots.ts';
import { statementsRun, waitFor } from './helpers/runtime.ts';
import { rawChat } from './helpers/sse.ts';
import type { RawChatResponse } from './helpers/sse.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** Events that may wait for a turn, set small for the test. */
const BACKLOG = 4;
/** Messages one visitor sends at once: well past what may wait. */
const BURST = 16;

/** A bot whose every turn takes 800 ms (bot code keeps it busy), then echoes: none ends during the burst. */
const SLOW_BOT = {
  'bot.json': json({ formatVersion: 1, name: 'slow-bot' }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'work' },
      {
        id: 'work',
        type: 'standard',
        cards: [
          { type: 'code', code: 'const end = Date.now() + 800; while (Date.now() < end) {}' },
          { type: 'say', message: { type: 'text', text: 'You said: {{ event.preview }}' } },
        ],
      },
    ],
  }),
};

/** The server's /metrics, read once: the value of a line (a regular expression up to the value). */
async function metricsOf(t: TestServer): Promise<(line: string) => number> {
  const metrics = await (await fetch(`${t.url}/metrics`)).text();
  return (line) => Number(new RegExp(`^${line} (\\S+)$`, 'm').exec(metrics)?.[1]);
}

for (const store of await testStores()) {
  describe(`admission control past a configured backlog (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let botDir: string;
    before(async () => {
      t = await startTestServer(store, {
        engineConcurrency: '2',
        engineWorkspaceConcurrency: '1',
        admissionBacklog: String(BACKLOG),
        // The limit is the backlog itself, whatever the engines' pace: the test is not timed.
        admissionWaitMs: '600000',
      });
      botDir = await mkdtemp(path.join(os.tmpdir(), 'parley-slow-bot-'));
      await writePackage(botDir, SLOW_BOT);
    });
    after(async () => {
      await t.close();
      await rm(botDir, { recursive: true, force: true });
    });

    /** The slow bot deployed in a new workspace, and a visitor of it with a conversation. */
    async function visitorOfNewWorkspace(name: string) {
      const workspace = await t.client().createWorkspace({ name });
      const { webhookUrl } = await deployWithCli(
        { url: t.url, token: t.token, workspaceId: workspace.id },
        botDir,
      );
      const visitor = await chat.Client.connect({ apiUrl: webhookUrl });
      const { conversation } = await visitor.createConversation({});
      const send = (text: string) =>
        rawChat(webhookUrl, 'POST', '/messages', {
          key: visitor.user.key,
          body: { conversationId: conversation.id, payload: { type: 'text', text } },
        });
      return { visitor, conversationId: conversation.id, webhookUrl, send };
    }

    test('past the backlog the busy workspace is refused with 429 and Retry-After; nothing acknowledged is lost; another workspace is admitted', async () => {
      const busy = await visitorOfNewWorkspace('busy');
      const quiet = await visitorOfNewWorkspace('quiet');

      // One visitor sends at once: the turns of a conversation run one at a time, so the rest wait.
      const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => busy.send(`m${i}`)));
      // The other workspace, while the busy one's queue is full: under its share, it is admitted.
      const elsewhere = await quiet.send('hello');
      assert.equal(elsewhere.status, 201, `another workspace is admitted: ${JSON.stringify(elsewhere.body)}`);

      const acknowledged = answers.filter((a) => a.status === 201);
      const refused = answers.filter((a) => a.status !== 201);
      assert.ok(refused.length > 0, `some of ${BURST} messages are refused past a backlog of ${BACKLOG}`);
      // What an engine claims as it is stored (at most its 2 places) does not wait; at most the backlog does.
      assert.ok(acknowledged.length <= BACKLOG + 2, `${acknowledged.length} acknowledged`);
      for (const res of refused) {
        assert.equal(res.status, 429);
        const body = res.body as Record<string, unknown>;
        assert.deepEqual(Object.keys(body).sort(), ['code', 'id', 'message', 'type']);
        assert.equal(body.type, 'RateLimited');
        assert.equal(body.code, 429);
        const retryAfter = Number(res.headers.get('retry-after'));
        assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After: ${retryAfter}`);
      }

      // Every message acknowledged is answered, and none refused was stored.
      const sent = acknowledged.map(
        (a) => (a.body as { message: { payload: { text: string } } }).message.payload.text,
      );
      const texts = async () =>
        (await busy.visitor.listMessages({ conversationId: busy.conversationId })).messages.map((m) =>
          'text' in m.payload ? String(m.payload.text) : '',
        );
      await waitFor(
        'every acknowledged message to be answered',
        async () => (await texts()).length >= 2 * sent.length,
        60_000,
      );
      const stored = await texts();
      assert.deepEqual(
        stored.filter((text) => !text.startsWith('You said: ')).sort(),
        [...sent].sort(),
        'exactly the acknowledged messages are stored',
      );
      assert.deepEqual(
        stored.filter((text) => text.startsWith('You said: ')).sort(),
        sent.map((text) => `You said: ${text}`).sort(),
        'each is answered once',
      );

      // Once the queue is worked off, the busy workspace is admitted again.
      assert.equal((await busy.send('again')).status, 201);

      const value = await metricsOf(t);
      assert.equal(value('parley_admission_refused_total\\{reason="share"\\}'), refused.length);
      assert.ok(value('parley_admission_admitted_total') >= acknowledged.length + 2);
      assert.equal(value('parley_admission_limit'), BACKLOG);
      assert.ok(Number.isFinite(value('parley_admission_queued')));
    });

    test('a message or event refused is refused before its user is read: it runs no statement; no entry is left behind', async () => {
      const door = await visitorOfNewWorkspace('door');
      const burst = await Promise.all(Array.from({ length: BURST }, (_, i) => door.send(`d${i}`)));
      assert.ok(
        burst.some((res) => res.status === 429),
        'the queue is past its backlog',
      );
      const webchatUrl = door.webhookUrl.replace(/\/chat\/([^/]+)$/, '/webchat/$1');
      assert.notEqual(webchatUrl, door.webhookUrl);
      const key = door.visitor.user.key;
      const conversationId = door.conversationId;
      // The Chat API's message and event, and the webchat's message, in turn.
      const kinds = [
        (i: number) => door.send(`late${i}`),
        (i: number) =>
          rawChat(door.webhookUrl, 'POST', '/events', {
            key,
            body: { conversationId, payload: { late: i } },
          }),
        (i: number) =>
          rawChat(webchatUrl, 'POST', '/messages', {
            key,
            body: { conversationId, payload: { type: 'text', text: `webchat${i}` } },
          }),
      ];
      // While the turns work the queue off (800 ms each, one at a time), each refusal is counted alone; the
      // least of them: the server's polls, its turns and admission's own reading run statements meanwhile
      // (before, each ran the user's read at least).
      // Nine at least, and more (up to 30) while none has cost nothing: a loaded machine's turns overlap more.
      const costs: number[] = [];
      for (let i = 0; i < 30 && (i < 9 || Math.min(...costs) > 0); i++) {
        const kind = kinds[i % kinds.length];
        assert.ok(kind);
        const start = await statementsRun(t);
        const res = await kind(i);
        const cost = (await statementsRun(t)) - start;
        // A turn that ended meanwhile may let one in.
        if (res.status === 201) continue;
        assert.equal(res.status, 429, JSON.stringify(res.body));
        assert.ok(Number(res.headers.get('retry-after')) >= 1);
        costs.push(cost);
      }
      assert.ok(costs.length >= 4, `${costs.length} refused`);
      assert.equal(Math.min(...costs), 0, `statements per refusal: ${costs.join(', ')}`);

      // Requests let in at the door that end before their insert leave it all the same: a body the schema
      // refuses (the handler never runs), a key whose user is gone. Each is sent until it is let in (the
      // turns of what was admitted meanwhile may fill the queue again).
      const letIn = async (what: string, send: () => Promise<{ status: number }>) => {
        let status = 429;
        await waitFor(what, async () => (status = (await send()).status) !== 429, 60_000);
        return status;
      };
      const invalid = () =>
        rawChat(door.webhookUrl, 'POST', '/messages', {
          key: door.visitor.user.key,
          body: { payload: { type: 'text', text: 'no conversation' } },
        });
      assert.equal(await letIn('a body without its conversation let in', invalid), 400);
      const gone = await chat.Client.connect({ apiUrl: door.webhookUrl });
      await gone.deleteUser({});
      const unknown = () =>
        rawChat(door.webhookUrl, 'POST', '/messages', {
          key: gone.user.key,
          body: { conversationId: door.conversationId, payload: { type: 'text', text: 'who?' } },
        });
      assert.equal(await letIn('a key whose user is gone let in', unknown), 401);
      await waitFor(
        'no request counted as entering',
        async () => (await metricsOf(t))('parley_admission_entering') === 0,
        5000,
      );
      // The next test starts from a queue worked off.
      await waitFor(
        'the queue worked off',
        async () => (await metricsOf(t))('parley_admission_queued') === 0,
        60_000,
      );
    });

    /** `count` messages sent at once: their answers as they come (`answered`), and all of them (`all`). */
    function sentAtOnce(send: (text: string) => Promise<RawChatResponse>, count: number, prefix: string) {
      const answered: RawChatResponse[] = [];
      const all = Promise.all(
        Array.from({ length: count }, (_, i) =>
          send(`${prefix}${i}`).then((res) => {
            answered.push(res);
            return res;
          }),
        ),
      );
      return { answered, all };
    }

    /** Runs `work` while the store's `lock` statement holds in a transaction from outside; `release` commits it. */
    const lockedFromOutside = (lock: string, work: (release: () => Promise<void>) => Promise<void>) => {
      const databaseUrl = t.settings.databaseUrl;
      assert.ok(databaseUrl);
      return lockedOutside(databaseUrl, lock, work);
    };

    const allRefused = (answered: { status: number }[]) =>
      assert.ok(
        answered.every((res) => res.status === 429),
        JSON.stringify(answered.map((a) => a.status)),
      );

    test(
      'a flood waiting for the store is refused at the door, at once: only what may wait takes a connection',
      {
        skip: store.name === 'postgres' ? false : 'the conversations are locked from outside with PostgreSQL',
      },
      async () => {
        const flooded = await visitorOfNewWorkspace('flooded');
        // From outside, the conversations are locked for writes (reads go on): every message admitted holds
        // its connection, waiting, and the requests' part of the pool (7 of 10) is soon all taken.
        await lockedFromOutside('lock table conversations in exclusive mode', async (release) => {
          const { answered, all } = sentAtOnce(flooded.send, BURST, 'f');
          // Past the backlog each is refused as it comes, without a connection; none is stored meanwhile.
          await waitFor(
            'the flood past the backlog refused',
            async () => answered.length >= BURST - BACKLOG,
            10_000,
          );
          allRefused(answered);
          await release();
          const acknowledged = (await all).filter((res) => res.status === 201);
          assert.equal(acknowledged.length, BACKLOG, `${acknowledged.length} acknowledged`);
          await waitFor(
            'the acknowledged messages answered',
            async () =>
              (await flooded.visitor.listMessages({ conversationId: flooded.conversationId })).messages
                .length >=
              2 * BACKLOG,
            60_000,
          );
        });
      },
    );

    test(
      'past capacity a message is refused at once while its user cannot be read',
      {
        skip: store.name === 'postgres' ? false : 'the user keys are locked from outside with PostgreSQL',
      },
      async () => {
        const locked = await visitorOfNewWorkspace('locked');
        const burst = await sentAtOnce(locked.send, BURST, 'l').all;
        assert.ok(
          burst.some((res) => res.status === 429),
          'the queue is past its backlog',
        );
        // From outside, the clients' ids (the users' among them) are locked even for reads: a request that
        // read its user first would wait for the lock, refused or not.
        await lockedFromOutside('lock table chat_ids in access exclusive mode', async (release) => {
          const { answered, all } = sentAtOnce(locked.send, 4, 'w');
          // A turn ending meanwhile may let one in, which then waits for the lock.
          await waitFor('the refusals answered', async () => answered.length >= 3, 5000);
          allRefused(answered);
          await release();
          await all;
        });
      },
    );
  });
}
