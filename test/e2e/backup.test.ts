// `parley backup` while the server answers a stream of messages, then `parley restore` into an empty store:
// the restored server has every message acknowledged before the backup began, and answers each of them.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import pg from 'pg';
import { deployWithCli } from '../helpers/chat-bots.ts';
import { runParley } from '../helpers/process.ts';
import { waitFor } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import { testDatabaseUrl, testStores } from '../helpers/stores.ts';

const SENDERS = 4;

/** A new, empty database beside the test one, its URL keeping the given URL's options (its schema). */
async function emptyDatabase(like: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `restore_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(like);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: testDatabaseUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

for (const store of await testStores()) {
  describe(`parley backup and restore (${store.name})`, { skip: store.skip }, () => {
    test('a backup taken under load restores to a server that answers every message acknowledged before it', async () => {
      const t = await startTestServer(store);
      const work = await mkdtemp(path.join(os.tmpdir(), 'parley-backup-'));
      const restored =
        store.name === 'postgres' ? await emptyDatabase(t.settings.databaseUrl ?? '') : undefined;
      let sending = true;
      let senders: Promise<void>[] = [];
      try {
        const storeFlags =
          store.name === 'postgres'
            ? ['--database-url', t.settings.databaseUrl ?? '']
            : ['--data-dir', t.settings.dataDir ?? ''];
        const echo = await deployWithCli(t, 'examples/echo-bot', ['--new']);
        const visitor = await chat.Client.connect({ apiUrl: echo.webhookUrl });
        const { conversation } = await visitor.createConversation({});

        const acknowledged: string[] = [];
        senders = Array.from({ length: SENDERS }, async (_, n) => {
          for (let i = 0; sending; i++) {
            const text = `m${n}-${i}`;
            // A message refused past the server's capacity (429) is not acknowledged: send another.
            const sent = await visitor
              .createMessage({ conversationId: conversation.id, payload: { type: 'text', text } })
              .then(
                () => true,
                (err: unknown) => {
                  if (chat.isApiError(err) && err.code === 429) return false;
                  throw err;
                },
              );
            if (sent) acknowledged.push(text);
            else await sleep(50);
          }
        });
        await waitFor('messages to flow', async () => acknowledged.length >= 20, 30_000);

        const file = path.join(work, 'parley.backup');
        const before = [...acknowledged];
        const backup = runParley(['backup', file, ...storeFlags]);
        assert.equal(await backup.exited, 0, backup.output());
        assert.match(backup.output(), /^Backed up the (SQLite|PostgreSQL) store to /m);
        sending = false;
        await Promise.all(senders);
        assert.ok(acknowledged.length > before.length, 'messages were taken while the backup ran');

        // A second backup to the same file is refused; a file that is no backup is not restored.
        const again = runParley(['backup', file, ...storeFlags]);
        assert.equal(await again.exited, 1);
        assert.match(again.output(), /exists: choose a new file/);
        const junk = path.join(work, 'junk');
        await writeFile(junk, 'not a backup');

        // Restore into an empty store, and start the server on it.
        const target = restored
          ? ['--database-url', restored.url]
          : ['--data-dir', await mkdtemp(path.join(work, 'restored-'))];
        const notBackup = runParley(['restore', junk, ...target]);
        assert.equal(await notBackup.exited, 1);
        assert.match(notBackup.output(), /is not a backup of Parley/);
        const restore = runParley(['restore', file, ...target]);
        assert.equal(await restore.exited, 0, restore.output());
        const twice = runParley(['restore', file, ...target]);
        assert.equal(await twice.exited, 1, 'a store that is not empty is not overwritten without --replace');
        await t.restart(restored ? { databaseUrl: restored.url } : { dataDir: target[1] ?? '' });

        // Every message acknowledged before the backup is there, and gets its answer.
        const texts = async () => {
          const seen: string[] = [];
          let nextToken: string | undefined;
          do {
            const page = await visitor.listMessages({ conversationId: conversation.id, nextToken });
            for (const m of page.messages) if (m.payload.type === 'text') seen.push(m.payload.text);
            nextToken = page.meta.nextToken;
          } while (nextToken);
          return new Set(seen);
        };
        const missing = await waitFor(
          'the restored server to answer every message acknowledged before the backup',
          async () => {
            const seen = await texts();
            const unanswered = before.filter((text) => !seen.has(text) || !seen.has(`You said: ${text}`));
            return unanswered.length === 0 ? [] : false;
          },
          120_000,
          500,
        );
        assert.deepEqual(missing, []);
      } finally {
        sending = false;
        await Promise.allSettled(senders);
        await t.close();
        await restored?.drop();
        await rm(work, { recursive: true, force: true });
      }
    });
  });
}
