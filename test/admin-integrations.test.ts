import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError } from '@botpress/client';
import { assertNoRepeats, ids, unique, walkPages } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../src/domain/shared/page-size.ts';

/** Integrations of a workspace's own through the Admin API: listed page by page, newest first. */
for (const store of await testStores()) {
  describe(`Admin API: a workspace's integrations (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    /** The ids of the integrations created, newest first; the first `named` are of `name`. */
    const created: string[] = [];
    const name = unique('listed').toLowerCase();
    const named = 5;
    before(async () => {
      t = await startTestServer(store);
      const admin = t.client();
      // More than a default page in all, `named` of them one integration's versions.
      for (let i = 0; i < PAGE_SIZE_DEFAULT; i++) {
        const other = unique('other').toLowerCase();
        created.unshift((await admin.createIntegration({ name: other, version: '1.0.0' })).integration.id);
      }
      for (let i = 0; i < named; i++) {
        created.unshift((await admin.createIntegration({ name, version: `1.0.${i}` })).integration.id);
      }
    });
    after(() => t.close());

    test('without a page size, a page of the default size, then the rest; newest first, each once', async () => {
      const admin = t.client();
      const pages = await walkPages(async (nextToken) => {
        const page = await admin.listIntegrations({ nextToken });
        return { ids: ids(page.integrations), nextToken: page.meta.nextToken };
      });
      assert.deepEqual(
        pages.map((page) => page.length),
        [PAGE_SIZE_DEFAULT, created.length - PAGE_SIZE_DEFAULT],
      );
      assertNoRepeats(pages.flat());
      assert.deepEqual(pages.flat(), created);
    });

    test('pages of 2 of one name: its versions, newest first, each once', async () => {
      const admin = t.client();
      const pages = await walkPages(async (nextToken) => {
        const page = await admin.listIntegrations({ name, pageSize: 2, nextToken });
        return { ids: ids(page.integrations), nextToken: page.meta.nextToken };
      });
      assert.deepEqual(
        pages.map((page) => page.length),
        [2, 2, 1],
      );
      assert.deepEqual(pages.flat(), created.slice(0, named));
      const one = await admin.listIntegrations({ name, version: '1.0.3' });
      assert.deepEqual(ids(one.integrations), [created[named - 4]]);
      assert.equal(one.meta.nextToken, undefined, 'one page, no token');
    });

    test(`a page holds at most ${PAGE_SIZE_MAX}; a token that is not this list's is refused`, async () => {
      const admin = t.client();
      const all = await admin.listIntegrations({ pageSize: PAGE_SIZE_MAX });
      assert.deepEqual(ids(all.integrations), created);
      assert.equal(all.meta.nextToken, undefined);
      await assert.rejects(admin.listIntegrations({ pageSize: PAGE_SIZE_MAX + 1 }), InvalidPayloadError);
      await assert.rejects(admin.listIntegrations({ nextToken: 'not-a-token' }), InvalidPayloadError);
    });
  });
}
