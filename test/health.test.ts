import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

for (const store of await testStores()) {
  describe(`operations endpoints (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t.close());

    test('healthz and readyz answer 200', async () => {
      assert.deepEqual(await (await fetch(`${t.url}/healthz`)).json(), { status: 'ok' });
      const ready = await fetch(`${t.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready' });
    });

    test('openapi.json documents the admin routes with their schemas', async () => {
      const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
        openapi: string;
        paths: Record<string, Record<string, { operationId?: string; responses?: object }>>;
      };
      assert.match(doc.openapi, /^3\./);
      const ops = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
      for (const op of [
        'listBots',
        'getBot',
        'createBot',
        'updateBot',
        'deleteBot',
        'introspect',
        'trackAnalytics',
      ]) {
        assert.ok(ops.includes(op), `${op} is documented`);
      }
      assert.ok(doc.paths['/v1/admin/bots']?.get?.responses, 'listBots has responses');
    });

    test('the docs page renders', async () => {
      const res = await fetch(`${t.url}/docs/`);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /swagger/i);
    });
  });
}
