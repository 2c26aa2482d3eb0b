import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Client } from '@botpress/client';
import { ChatSession, deployWithCli, textOf, turnOutcome } from './helpers/chat-bots.ts';
import { runParley } from './helpers/process.ts';
import type { ParleyProcess } from './helpers/process.ts';
import { freshPostgresSchema, testStores } from './helpers/stores.ts';
import { LISTENING, STARTS_WITHIN_MS } from './helpers/serve-processes.ts';

/** What the engine logs when a turn failed for a reason that may pass. */
const TRIED_AGAIN = /a turn failed(; it will be tried again|, and so did recording it)/;

/**
 * A TCP proxy between Parley and Postgres that the test can cut: every open connection is dropped and
 * new ones are refused until it is restored, as when the database restarts or the network fails.
 */
class CuttableProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address === 'object' && address) this.port = address.port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
  }
}

/**
 * Holds SQLite's write lock from another process, as a backup tool or a stuck writer would, until the
 * test releases it (or 90 s pass, so a failed test cannot leave it held).
 */
async function lockSqlite(file: string): Promise<{ release: () => Promise<void> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN EXCLUSIVE');
    process.stdout.write('locked\\n');
    const release = () => { db.exec('COMMIT'); db.close(); process.exit(0); };
    process.stdin.on('data', release);
    setTimeout(release, 90000);`;
  const child = spawn(process.execPath, ['-e', script, file], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    release: async () => {
      child.stdin.end('release\n');
      await exited;
    },
  };
}

for (const store of await testStores()) {
  describe(`the store is unreachable in the middle of a turn (${store.name})`, { skip: store.skip }, () => {
    const token = `bp_pat_test_${randomBytes(24).toString('base64url')}`;
    let proc: ParleyProcess | undefined;
    let session: ChatSession | undefined;
    let dataDir: string | undefined;
    let schema: Awaited<ReturnType<typeof freshPostgresSchema>> | undefined;
    let proxy: CuttableProxy | undefined;
    after(async () => {
      await session?.close();
      if (proc && proc.child.exitCode === null && proc.child.signalCode === null) {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
      await proxy?.cut();
      await schema?.drop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    test('then comes back: the turn finishes, its event processed once, each reply sent once', async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'parley-outage-'));
      let databaseUrl: string | undefined;
      if (store.name === 'postgres') {
        schema = await freshPostgresSchema();
        const direct = new URL(schema.url);
        proxy = new CuttableProxy(direct.hostname, Number(direct.port || 5432));
        await proxy.open();
        direct.port = String(proxy.port);
        databaseUrl = direct.toString();
      }
      proc = runParley(['serve', '--port', '0', '--data-dir', dataDir], {
        PARLEY_ADMIN_TOKEN: token,
        ...(databaseUrl && { DATABASE_URL: databaseUrl }),
      });
      const [, url] = await proc.waitFor(LISTENING, STARTS_WITHIN_MS);
      const [, workspaceId] = await proc.waitFor(/workspace id: (\S+)/);
      assert.ok(url && workspaceId);
      const { botId, webhookUrl } = await deployWithCli(
        { url, token, workspaceId },
        'test/fixtures/slow-cards',
      );

      // One turn: 'one', 1.5 s of code, 'two', 1.5 s of code, 'three'. The store goes away once 'one' is out.
      session = await ChatSession.open(webhookUrl);
      const messageId = await session.say('go');
      assert.deepEqual(await session.nextTexts(1), ['one']);
      if (proxy) {
        await proxy.cut();
        await new Promise((resolve) => setTimeout(resolve, 4000));
        await proxy.open();
        await proc.waitFor(TRIED_AGAIN, 30_000);
      } else {
        // Held until the turn has failed: SQLite waits out its busy timeout (5 s) synchronously, and the
        // claims' renewal and the next claim each wait it out before the turn's own write does (measured:
        // the turn fails 20 to 30 s after the lock is taken), so a fixed lock time would race the machine.
        const lock = await lockSqlite(path.join(dataDir, 'parley.db'));
        try {
          await proc.waitFor(TRIED_AGAIN, 60_000);
        } finally {
          await lock.release();
        }
      }

      const runtime = new Client({ apiUrl: url, token, workspaceId, botId });
      // The event stays pending while it waits to be tried again, then ends processed.
      assert.deepEqual(await turnOutcome(runtime, messageId, 60_000), {
        status: 'processed',
        failureReason: null,
      });
      const { events } = await runtime.listEvents({ messageId });
      assert.equal(events.length, 1, 'one event for the message');
      const { messages } = await runtime.listMessages({ conversationId: events[0]?.conversationId });
      assert.deepEqual(
        messages.reverse().map((m) => [m.userId === botId ? 'bot' : 'user', textOf(m)]),
        [
          ['user', 'go'],
          ['bot', 'one'],
          ['bot', 'two'],
          ['bot', 'three'],
        ],
        'nothing lost and nothing twice',
      );
    });
  });
}
