// The SQLite store checkpoints its write-ahead log on a thread of its own, so no request's commit pays
// for copying the log into the database (see src/store/sqlite-checkpointer.ts).
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openStore } from '../src/store/index.ts';

test('what is written reaches the database file within a second or two, with no commit checkpointing it', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-store-'));
  const file = path.join(dir, 'parley.db');
  const store = await openStore({ kind: 'sqlite', file });
  try {
    await sleep(1200); // the migrations' pages are checkpointed
    const before = (await stat(file)).size;
    const value = 'x'.repeat(1000);
    for (let batch = 0; batch < 20; batch++) {
      const rows = Array.from({ length: 100 }, (_, i) => ({
        resource_id: `r${batch}`,
        key: `k${i}`,
        value,
      }));
      await store.db.insertInto('tags').values(rows).execute();
    }
    // 2 MB written: far below the writer's own checkpoint, so only the checkpointer moves it.
    const deadline = Date.now() + 5000;
    let size = before;
    while (Date.now() < deadline && size < before + 2_000_000) {
      await sleep(100);
      size = (await stat(file)).size;
    }
    assert.ok(size >= before + 2_000_000, `the database file grew from ${before} to ${size} bytes`);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
