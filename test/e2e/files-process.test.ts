import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Client } from '@botpress/client';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { ServedProcess } from '../helpers/serve-processes.ts';
import { ServeProcesses } from '../helpers/serve-processes.ts';
import { waitFor } from '../helpers/runtime.ts';
import { testStores } from '../helpers/stores.ts';

const MB = 1024 * 1024;

/** The resident memory of a process, in bytes (Linux). */
async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  assert.ok(kb, 'VmRSS is readable');
  return Number(kb) * 1024;
}

/** PUTs `total` bytes of random content in 64 KB writes (never whole in this process either); answers its SHA-256. */
function streamUpload(url: string, total: number): Promise<{ status: number; sha256: string }> {
  const hash = createHash('sha256');
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': total },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, sha256: hash.digest('hex') }));
    });
    let sent = 0;
    const write = () => {
      while (sent < total) {
        const chunk = randomBytes(Math.min(64 * 1024, total - sent));
        hash.update(chunk);
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

for (const store of await testStores()) {
  describe(`Files API against a parley serve process (${store.name})`, { skip: store.skip }, () => {
    const servers = new ServeProcesses(store, 'files');
    const { token } = servers;
    after(() => servers.close());

    const serve = () => servers.serve({ args: ['--log-level', 'info', '--files-max-size-mb', '200'] });

    /** Whether an indexer holds a claim on the file (read from the store the server uses). */
    async function claimed(fileId: string): Promise<boolean> {
      const query = 'select index_lease_owner from files where id = $1';
      const databaseUrl = await servers.databaseUrl();
      if (databaseUrl !== undefined) {
        const db = new pg.Client({ connectionString: databaseUrl });
        await db.connect();
        try {
          const { rows } = await db.query<{ index_lease_owner: string | null }>(query, [fileId]);
          return rows[0]?.index_lease_owner != null;
        } finally {
          await db.end();
        }
      }
      const db = new Database(path.join(await servers.dataDir(), 'parley.db'), { readonly: true });
      try {
        const row = db.prepare(query.replace('$1', '?')).get(fileId) as
          { index_lease_owner: string | null } | undefined;
        return row?.index_lease_owner != null;
      } finally {
        db.close();
      }
    }

    let server: ServedProcess;
    let botId: string;
    /** The bot's client on the server running now (its port changes with a restart). */
    const client = () => new Client({ apiUrl: server.url, token, botId });

    test('a 50 MB upload streams to storage: the server’s memory stays flat (so does a 150 MB one), and it reads back identical', async () => {
      server = await serve();
      const [, workspaceId] = await server.proc.waitFor(/workspace id: (\S+)/);
      ({
        bot: { id: botId },
      } = await new Client({ apiUrl: server.url, token, workspaceId }).createBot({ name: 'files' }));
      const pid = server.proc.child.pid as number;
      // Warm up the code paths of an upload and a download first.
      await client().uploadFile({ key: 'warm.bin', content: randomBytes(MB) });
      await (await fetch((await client().getFile({ id: 'warm.bin' })).file.url)).arrayBuffer();
      const growth: Record<number, number> = {};
      for (const sizeMb of [50, 150]) {
        const size = sizeMb * MB;
        const before = await rss(pid);
        let peak = before;
        const sampler = setInterval(() => {
          void rss(pid).then(
            (v) => (peak = Math.max(peak, v)),
            () => undefined,
          );
        }, 20);
        const key = `large/${sizeMb}.bin`;
        const { file } = await client().upsertFile({ key, size });
        const uploaded = await streamUpload(file.uploadUrl, size);
        clearInterval(sampler);
        assert.equal(uploaded.status, 200);
        growth[sizeMb] = peak - before;

        const { file: stored } = await client().getFile({ id: key });
        assert.equal(stored.status, 'upload_completed');
        assert.equal(stored.size, size);
        const res = await fetch(stored.url);
        const hash = createHash('sha256');
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) hash.update(chunk);
        assert.equal(hash.digest('hex'), uploaded.sha256);
        assert.equal(res.headers.get('etag'), `"${uploaded.sha256}"`);
        await client().deleteFile({ id: key });
      }
      // What memory grows by is the garbage V8 collects in its own time (tens of MB at most), not the
      // content: less than the 50 MB file, and no more for a file three times larger.
      const [fifty, hundredFifty] = [growth[50] as number, growth[150] as number];
      const report = `grew by ${Math.round(fifty / MB)} MB (50 MB upload) and ${Math.round(hundredFifty / MB)} MB (150 MB upload)`;
      console.log(`the server's resident memory ${report} (printed)`);
      assert.ok(fifty < 48 * MB, report);
      assert.ok(hundredFifty < 48 * MB && hundredFifty < fifty + 24 * MB, report);
    });

    test('SIGKILL in the middle of an indexing: after a restart the file is indexed', async () => {
      const sections = Array.from(
        { length: 30_000 },
        (_, i) =>
          `## Section ${i}\n\nParagraph ${i} is about subject${i} and the weather in town ${i % 50}.\n`,
      );
      sections.push('## The end\n\nThe final paragraph mentions a zeppelin.\n');
      const { file } = await client().uploadFile({
        key: 'big.md',
        content: sections.join('\n'),
        index: true,
      });
      // Kill the server as soon as its indexer has claimed the file: while it parses and stores passages.
      await waitFor('the indexer to claim the file', () => claimed(file.id), 20_000, 10);
      assert.equal(
        (await client().getFile({ id: file.id })).file.status,
        'indexing_pending',
        'still indexing',
      );
      server.proc.child.kill('SIGKILL');
      await server.proc.exited;

      server = await serve();
      const restarted = client();
      const done = await waitFor(
        'the interrupted indexing to finish after the restart',
        async () => {
          const { file: f } = await restarted.getFile({ id: file.id });
          return f.status === 'indexing_completed' ? f : undefined;
        },
        90_000,
        250,
      );
      assert.equal(done.status, 'indexing_completed');
      const { passages } = await restarted.searchFiles({ query: 'zeppelin', contextDepth: 0 });
      assert.equal(passages[0]?.content, 'The final paragraph mentions a zeppelin.');
      const page = await restarted.listFilePassages({ id: file.id, pageSize: 3 });
      assert.deepEqual(
        page.passages.map((p) => p.content),
        ['## Section 0', 'Paragraph 0 is about subject0 and the weather in town 0.', '## Section 1'],
        'each passage once, in order',
      );
    });
  });
}
