import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  AlreadyExistsError,
  ForbiddenError,
  InvalidPayloadError,
  PayloadTooLargeError,
  ResourceNotFoundError,
} from '@botpress/client';
import type { Client } from '@botpress/client';
import {
  assertErrorBody,
  assertId,
  createTestBot,
  rawRuntime,
  rejectsWith,
  unique,
} from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const keysOf = (files: { key: string }[]) => files.map((f) => f.key).sort();

for (const store of await testStores()) {
  describe(
    `Files API: files, tags, copies, knowledge bases and access (${store.name})`,
    { skip: store.skip },
    () => {
      let t: TestServer;
      let bot: TestBot;
      before(async () => {
        t = await startTestServer(store);
        bot = await createTestBot(t, 'files-api');
      });
      after(() => t.close());

      test('upsertFile answers the file record and an absolute, signed upload URL on the server’s origin', async () => {
        const { file } = await bot.client.upsertFile({
          key: 'records/first.txt',
          size: 3,
          tags: { a: 'b' },
          metadata: { n: 1, nested: { x: true } },
          index: false,
        });
        assertId(file.id, 'file');
        assert.equal(file.botId, bot.botId);
        assert.equal(file.key, 'records/first.txt');
        assert.equal(file.status, 'upload_pending');
        assert.equal(file.size, null);
        assert.equal(file.contentType, 'text/plain');
        assert.deepEqual(file.tags, { a: 'b' });
        assert.deepEqual(file.metadata, { n: 1, nested: { x: true } });
        assert.deepEqual(file.accessPolicies, []);
        assert.deepEqual(file.owner, { type: 'bot', id: bot.botId });
        assert.ok(file.uploadUrl.startsWith(`${t.url}/file-content/${file.id}/upload?`));
        assert.match(file.uploadUrl, /expires=\d+&signature=/);
        assert.ok(file.url.startsWith(t.url));
        // The same key again: the same record, its content erased; what is not given is kept.
        const { file: again } = await bot.client.upsertFile({ key: 'records/first.txt', size: 4 });
        assert.equal(again.id, file.id);
        assert.deepEqual(again.tags, { a: 'b' });
        assert.notEqual(again.uploadUrl, file.uploadUrl);
      });

      test('{id} takes the id or the key, keys with / included', async () => {
        const key = `dir/sub dir/${unique('k')}.md`;
        const { file } = await bot.client.upsertFile({ key, size: 1 });
        assert.equal((await bot.client.getFile({ id: key })).file.id, file.id);
        assert.equal((await bot.client.getFile({ id: file.id })).file.key, key);
        const { file: updated } = await bot.client.updateFileMetadata({ id: key, metadata: { via: 'key' } });
        assert.deepEqual(updated.metadata, { via: 'key' });
        await bot.client.deleteFile({ id: key });
        await rejectsWith(bot.client.getFile({ id: key }), ResourceNotFoundError);
        await rejectsWith(bot.client.getFile({ id: file.id }), ResourceNotFoundError);
      });

      test('updateFileMetadata merges metadata and tags (null deletes), replaces policies, sets and clears expiry', async () => {
        const { file } = await bot.client.upsertFile({
          key: unique('meta'),
          size: 1,
          tags: { keep: '1', drop: '2' },
          metadata: { keep: 1, drop: 2 },
        });
        const expiresAt = new Date(Date.now() + 3600_000).toISOString();
        const { file: changed } = await bot.client.updateFileMetadata({
          id: file.id,
          metadata: { drop: null, added: [1, 2] },
          tags: { drop: null, added: 'x' },
          accessPolicies: ['integrations'],
          expiresAt,
        });
        assert.deepEqual(changed.metadata, { keep: 1, added: [1, 2] });
        assert.deepEqual(changed.tags, { keep: '1', added: 'x' });
        assert.deepEqual(changed.accessPolicies, ['integrations']);
        assert.ok(changed.expiresAt);
        const { file: cleared } = await bot.client.updateFileMetadata({ id: file.id, expiresAt: null });
        assert.equal(cleared.expiresAt, undefined);
        assert.deepEqual(cleared.metadata, { keep: 1, added: [1, 2] }, 'omitted fields are unchanged');
      });

      test('expiresAt must be in the future and within 90 days', async () => {
        const past = new Date(Date.now() - 60_000).toISOString();
        const far = new Date(Date.now() + 91 * 24 * 3600_000).toISOString();
        await rejectsWith(
          bot.client.upsertFile({ key: 'exp', size: 1, expiresAt: past }),
          InvalidPayloadError,
          /future/,
        );
        await rejectsWith(
          bot.client.upsertFile({ key: 'exp', size: 1, expiresAt: far }),
          InvalidPayloadError,
          /90 days/,
        );
        await rejectsWith(
          bot.client.upsertFile({ key: 'exp', size: 1, expiresAt: 'tomorrow' }),
          InvalidPayloadError,
        );
        const { file } = await bot.client.upsertFile({ key: 'exp', size: 1 });
        await rejectsWith(
          bot.client.updateFileMetadata({ id: file.id, expiresAt: past }),
          InvalidPayloadError,
        );
      });

      describe('listFiles', () => {
        let lister: TestBot;
        before(async () => {
          lister = await createTestBot(t, 'lister');
          const files: [string, Record<string, string>, boolean][] = [
            ['a.txt', { category: 'Sales', region: 'eu' }, false],
            ['b.txt', { category: 'Support', region: 'us' }, true],
            ['c.txt', { category: 'Sales' }, false],
            ['d.txt', { category: 'Other', integrationName: 'webchat' }, true],
            ['e.txt', {}, false],
          ];
          for (const [key, tags, index] of files) {
            await lister.client.upsertFile({ key, size: key.charCodeAt(0), tags, index });
          }
        });
        const list = async (input: Parameters<Client['listFiles']>[0]) =>
          keysOf((await lister.client.listFiles(input)).files);

        test('tag filters: a value, a list of values, in, not, exists', async () => {
          assert.deepEqual(await list({ tags: { category: 'Sales' } }), ['a.txt', 'c.txt']);
          assert.deepEqual(await list({ tags: { category: ['Sales', 'Other'] } }), [
            'a.txt',
            'c.txt',
            'd.txt',
          ]);
          assert.deepEqual(await list({ tags: { category: { in: ['Support', 'Other'] } } }), [
            'b.txt',
            'd.txt',
          ]);
          assert.deepEqual(await list({ tags: { category: { in: 'Support' } } }), ['b.txt']);
          assert.deepEqual(await list({ tags: { category: { not: 'Sales' } } }), ['b.txt', 'd.txt', 'e.txt']);
          assert.deepEqual(await list({ tags: { integrationName: { not: ['webchat'] } } }), [
            'a.txt',
            'b.txt',
            'c.txt',
            'e.txt',
          ]);
          assert.deepEqual(await list({ tags: { region: { exists: true } } }), ['a.txt', 'b.txt']);
          assert.deepEqual(await list({ tags: { region: { exists: false } } }), ['c.txt', 'd.txt', 'e.txt']);
          assert.deepEqual(
            await list({ tags: { category: 'Sales', region: { exists: false } } }),
            ['c.txt'],
            'ANDed',
          );
          // The JSON form of the hosted docs, and the bracket form of plain qs.
          assert.deepEqual(
            await list({ tags: JSON.stringify({ category: { in: ['Sales'] }, region: 'eu' }) }),
            ['a.txt'],
          );
          const raw = await rawRuntime(t, lister, 'GET', '/v1/files?tags[category]=Support');
          assert.deepEqual(keysOf((raw.body as { files: { key: string }[] }).files), ['b.txt']);
        });

        test('ids and indexed filters', async () => {
          const { files } = await lister.client.listFiles({});
          const [first, second] = files;
          assert.ok(first && second);
          assert.deepEqual(await list({ ids: [first.id] }), [first.key], 'one id (sent as a scalar)');
          assert.deepEqual(await list({ ids: [first.id, second.id] }), [first.key, second.key].sort());
          assert.deepEqual(await list({ indexed: true }), ['b.txt', 'd.txt']);
          assert.deepEqual(await list({ indexed: false }), ['a.txt', 'c.txt', 'e.txt']);
        });

        test('sort fields and directions, newest first by default; pages walked by the client’s lister', async () => {
          const order = async (input: Parameters<Client['listFiles']>[0]) =>
            (await lister.client.listFiles(input)).files.map((f) => f.key);
          assert.deepEqual(await order({}), ['e.txt', 'd.txt', 'c.txt', 'b.txt', 'a.txt']);
          assert.deepEqual(await order({ sortField: 'key', sortDirection: 'asc' }), [
            'a.txt',
            'b.txt',
            'c.txt',
            'd.txt',
            'e.txt',
          ]);
          assert.deepEqual(await order({ sortField: 'size', sortDirection: 'desc' }), [
            'e.txt',
            'd.txt',
            'c.txt',
            'b.txt',
            'a.txt',
          ]);
          assert.equal((await order({ sortField: 'status' })).length, 5);
          assert.equal((await order({ sortField: 'updatedAt', sortDirection: 'asc' }))[0], 'a.txt');
          const walked = await lister.client.list
            .files({ pageSize: 2, sortField: 'key', sortDirection: 'desc' })
            .collect();
          assert.deepEqual(
            walked.map((f) => f.key),
            ['e.txt', 'd.txt', 'c.txt', 'b.txt', 'a.txt'],
          );
          const sized = await lister.client.list
            .files({ pageSize: 2, sortField: 'size', sortDirection: 'asc' })
            .collect();
          assert.deepEqual(
            sized.map((f) => f.key),
            ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt'],
          );
        });

        test('bad filters answer 400', async () => {
          await rejectsWith(list({ tags: { category: { near: 'x' } } }), InvalidPayloadError);
          await rejectsWith(list({ tags: '{not json' }), InvalidPayloadError);
          await rejectsWith(list({ tags: { region: { exists: 'maybe' } } }), InvalidPayloadError);
          await rejectsWith(
            list({ ids: Array.from({ length: 51 }, (_, i) => `file_${i}`) }),
            InvalidPayloadError,
          );
          await rejectsWith(list({ sortField: 'colour' as 'key' }), InvalidPayloadError);
          await rejectsWith(list({ nextToken: 'garbage' }), InvalidPayloadError);
        });

        test('listFileTags and listFileTagValues, walked by the client’s listers', async () => {
          assert.deepEqual(await lister.client.list.fileTags({}).collect(), [
            'category',
            'integrationName',
            'region',
          ]);
          assert.deepEqual(
            await lister.client.list.fileTagValues({ tag: 'category', pageSize: 1 }).collect(),
            ['Other', 'Sales', 'Support'],
          );
          assert.deepEqual((await lister.client.listFileTagValues({ tag: 'none' })).values, []);
        });
      });

      test('copyFile: to a new key, onto a taken key only with overwrite, to another bot of the workspace', async () => {
        const key = `copies/${unique('src')}.txt`;
        await bot.client.uploadFile({ key, content: 'copied content', tags: { t: '1' }, metadata: { m: 2 } });
        const dest = `copies/${unique('dst')}.txt`;
        const { file: copy } = await bot.client.copyFile({ idOrKey: key, destinationKey: dest });
        assert.equal(copy.key, dest);
        assert.equal(copy.status, 'upload_completed');
        assert.deepEqual(copy.tags, { t: '1' });
        assert.deepEqual(copy.metadata, { m: 2 });
        assert.equal(await (await fetch(copy.url)).text(), 'copied content');
        await rejectsWith(bot.client.copyFile({ idOrKey: key, destinationKey: dest }), AlreadyExistsError);
        const { file: replaced } = await bot.client.copyFile({
          idOrKey: key,
          destinationKey: dest,
          overwrite: true,
        });
        assert.notEqual(replaced.id, copy.id);
        await rejectsWith(bot.client.getFile({ id: copy.id }), ResourceNotFoundError);

        const other = await createTestBot(t, 'copy-target');
        const { file: across } = await bot.client.copyFile({
          idOrKey: key,
          destinationKey: 'from-another-bot.txt',
          'x-destination-bot-id': other.botId,
        });
        assert.equal(across.botId, other.botId);
        const { file: seen } = await other.client.getFile({ id: 'from-another-bot.txt' });
        assert.equal(await (await fetch(seen.url)).text(), 'copied content');

        await rejectsWith(
          bot.client.copyFile({ idOrKey: 'nope', destinationKey: 'x' }),
          ResourceNotFoundError,
        );
        await rejectsWith(
          bot.client.copyFile({
            idOrKey: key,
            destinationKey: 'x',
            'x-destination-bot-id': 'bot_01JZZZZZZZZZZZZZZZZZZZZZZZ',
          }),
          ResourceNotFoundError,
        );
        const { file: pending } = await bot.client.upsertFile({ key: unique('empty'), size: 3 });
        await rejectsWith(
          bot.client.copyFile({ idOrKey: pending.id, destinationKey: 'y' }),
          InvalidPayloadError,
        );
      });

      test('knowledge bases: create, update (tags merge), list with tag filters, delete', async () => {
        const kbBot = await createTestBot(t, 'kb-bot');
        const { knowledgeBase: faq } = await kbBot.client.createKnowledgeBase({
          name: 'FAQ',
          tags: { lang: 'en' },
        });
        assertId(faq.id, 'kb');
        assert.deepEqual(faq, { id: faq.id, name: 'FAQ', tags: { lang: 'en' } });
        const { knowledgeBase: docs } = await kbBot.client.createKnowledgeBase({ name: 'Docs' });
        const { knowledgeBase: renamed } = await kbBot.client.updateKnowledgeBase({
          id: docs.id,
          name: 'Manuals',
          tags: { lang: 'fr', team: 'x' },
        });
        assert.deepEqual(renamed.tags, { lang: 'fr', team: 'x' });
        const { knowledgeBase: dropped } = await kbBot.client.updateKnowledgeBase({
          id: docs.id,
          name: 'Manuals',
          tags: { team: null },
        });
        assert.deepEqual(dropped.tags, { lang: 'fr' });
        const all = await kbBot.client.list.knowledgeBases({ pageSize: 1 }).collect();
        assert.deepEqual(
          all.map((k) => k.name),
          ['Manuals', 'FAQ'],
        );
        assert.ok(all.every((k) => typeof k.createdAt === 'string'));
        const english = await kbBot.client.listKnowledgeBases({ tags: { lang: 'en' } });
        assert.deepEqual(
          english.knowledgeBases.map((k) => k.id),
          [faq.id],
        );
        await kbBot.client.deleteKnowledgeBase({ id: faq.id });
        await rejectsWith(kbBot.client.deleteKnowledgeBase({ id: faq.id }), ResourceNotFoundError);
        await rejectsWith(kbBot.client.updateKnowledgeBase({ id: faq.id, name: 'x' }), ResourceNotFoundError);
        await rejectsWith(kbBot.client.createKnowledgeBase({ name: '' }), InvalidPayloadError);
        await rejectsWith(
          bot.client.deleteKnowledgeBase({ id: docs.id }),
          ResourceNotFoundError,
          /doesn't exist/,
        );
      });

      test('access: another bot’s files are 404; an integration sees its own and the shared ones, changes only its own', async () => {
        const owner = await createTestBot(t, 'owner');
        const stranger = await createTestBot(t, 'stranger');
        const { file } = await owner.client.upsertFile({ key: 'mine.txt', size: 1 });
        await rejectsWith(stranger.client.getFile({ id: file.id }), ResourceNotFoundError);
        await rejectsWith(stranger.client.getFile({ id: 'mine.txt' }), ResourceNotFoundError);
        await rejectsWith(stranger.client.deleteFile({ id: file.id }), ResourceNotFoundError);
        assert.deepEqual((await stranger.client.listFiles({})).files, []);
        // Another bot's key may not act as this bot at all.
        const crossed = t.client({ token: stranger.key, botId: owner.botId, workspaceId: undefined });
        await rejectsWith(crossed.listFiles({}), ForbiddenError);

        const integration = t.client({
          token: owner.key,
          botId: owner.botId,
          workspaceId: undefined,
          integrationAlias: 'crm',
        });
        const { file: own } = await integration.upsertFile({ key: 'mine.txt', size: 1 });
        assert.notEqual(own.id, file.id, 'keys are per owner');
        assert.deepEqual(own.owner, { type: 'integration', name: 'crm', alias: 'crm' });
        assert.equal((await integration.getFile({ id: 'mine.txt' })).file.id, own.id);
        await rejectsWith(integration.getFile({ id: file.id }), ResourceNotFoundError, /doesn't exist/);
        await owner.client.upsertFile({ key: 'shared.txt', size: 1, accessPolicies: ['integrations'] });
        assert.deepEqual(keysOf((await integration.listFiles({})).files), ['mine.txt', 'shared.txt']);
        await rejectsWith(
          integration.updateFileMetadata({ id: 'shared.txt', tags: { x: 'y' } }),
          ForbiddenError,
        );
        await rejectsWith(integration.deleteFile({ id: 'shared.txt' }), ForbiddenError);
        // The bot sees its integrations' files, and may not change them either.
        assert.equal((await owner.client.listFiles({})).files.length, 3);
        await rejectsWith(owner.client.deleteFile({ id: own.id }), ForbiddenError);
      });

      test('workspace members act as the bot with their own token; members of other workspaces do not', async () => {
        const { file } = await t.client({ botId: bot.botId }).upsertFile({ key: 'by-member.txt', size: 1 });
        assert.equal(file.botId, bot.botId);
        const workspace = await t.client().createWorkspace({ name: 'elsewhere' });
        const { bot: foreign } = await t.client({ workspaceId: workspace.id }).createBot({ name: 'foreign' });
        const { value } = await t
          .client({ workspaceId: workspace.id })
          .createBotApiKey({ botId: foreign.id });
        const outsider = t.client({ token: value, botId: foreign.id, workspaceId: undefined });
        await rejectsWith(
          outsider.copyFile({ idOrKey: 'x', destinationKey: 'y', 'x-destination-bot-id': bot.botId }),
          ResourceNotFoundError,
        );
        await rejectsWith(outsider.getFile({ id: file.id }), ResourceNotFoundError);
      });

      test('unknown files are 404 on every route that names one', async () => {
        const id = 'file_01JZZZZZZZZZZZZZZZZZZZZZZZ';
        await rejectsWith(bot.client.getFile({ id }), ResourceNotFoundError);
        await rejectsWith(bot.client.updateFileMetadata({ id, tags: {} }), ResourceNotFoundError);
        await rejectsWith(bot.client.deleteFile({ id }), ResourceNotFoundError);
        await rejectsWith(bot.client.listFilePassages({ id }), ResourceNotFoundError);
        await rejectsWith(bot.client.setFilePassages({ id, passages: [] }), ResourceNotFoundError);
        const res = await rawRuntime(t, bot, 'GET', `/v1/files/${id}`);
        assertErrorBody(res, 404, 'ResourceNotFound');
      });

      test('JSON bodies of the Files API are limited to 1 MB', async () => {
        const big = 'x'.repeat(1024 * 1024 + 10);
        await rejectsWith(
          bot.client.upsertFile({ key: 'big', size: 1, metadata: { big } }),
          PayloadTooLargeError,
        );
        const res = await rawRuntime(t, bot, 'PUT', '/v1/files', { key: 'big', size: 1, metadata: { big } });
        assertErrorBody(res, 413, 'PayloadTooLarge');
      });

      test('bad bodies answer 400 naming the field', async () => {
        await rejectsWith(
          bot.client.upsertFile({ key: 'x' } as { key: string; size: number }),
          InvalidPayloadError,
          /size/,
        );
        await rejectsWith(bot.client.upsertFile({ key: '', size: 1 }), InvalidPayloadError);
        await rejectsWith(bot.client.upsertFile({ key: 'x', size: -1 }), InvalidPayloadError);
        await rejectsWith(
          bot.client.upsertFile({ key: 'x', size: 1, accessPolicies: ['everyone' as 'integrations'] }),
          InvalidPayloadError,
        );
        await rejectsWith(
          bot.client.upsertFile({ key: 'x', size: 1, tags: { a: 'x'.repeat(1001) } }),
          InvalidPayloadError,
        );
      });

      test('the OpenAPI document lists every Files route', async () => {
        const doc = (await (await fetch(`${t.url}/docs/json`)).json()) as {
          paths: Record<string, Record<string, unknown>>;
        };
        const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
          Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
        );
        for (const route of [
          'PUT /v1/files',
          'GET /v1/files',
          'GET /v1/files/{id}',
          'PUT /v1/files/{id}',
          'DELETE /v1/files/{id}',
          'POST /v1/files/{idOrKey}/{destinationKey}',
          'GET /v1/files/search',
          'GET /v1/files/{id}/passages',
          'PUT /v1/files/{id}/passages',
          'GET /v1/files/tags',
          'GET /v1/files/tags/{tag}/values',
          'POST /v1/files/knowledge-bases',
          'GET /v1/files/knowledge-bases',
          'PUT /v1/files/knowledge-bases/{id}',
          'DELETE /v1/files/knowledge-bases/{id}',
          'PUT /file-content/{id}/upload',
          'GET /file-content/{id}',
          'GET /file-content/public/{id}',
        ]) {
          assert.ok(routes.includes(route), `${route} is in the OpenAPI document`);
        }
      });
    },
  );
}
