import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  AlreadyExistsError,
  ForbiddenError,
  InvalidPayloadError,
  ResourceNotFoundError,
  UnauthorizedError,
} from '@botpress/client';
import type { Client } from '@botpress/client';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

for (const store of await testStores()) {
  describe(`Admin API: workspaces (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let owner: Client;
    before(async () => {
      t = await startTestServer(store);
      owner = t.client({ workspaceId: undefined });
    });
    after(() => t.close());

    /** A second account, member of nothing, with a token and a client. */
    async function otherAccount(email: string): Promise<{ id: string; token: string; client: Client }> {
      const account = await t.server.domain.accounts.getOrCreateByEmail(email);
      const token = (await t.server.domain.accounts.createToken(account.id, 'test')).value;
      return { id: account.id, token, client: t.client({ token, workspaceId: undefined }) };
    }

    async function memberOf(workspaceId: string, email: string, role: 'administrator' | 'developer') {
      await t.client({ workspaceId }).createWorkspaceMember({ email, role });
      const account = await t.server.domain.accounts.findByEmail(email);
      assert.ok(account);
      const token = (await t.server.domain.accounts.createToken(account.id, 'test')).value;
      return t.client({ token, workspaceId: undefined });
    }

    test('createWorkspace makes the caller its owner; getWorkspace returns it', async () => {
      const me = (await owner.getAccount({})).account;
      const ws = await owner.createWorkspace({ name: 'Acme' });
      assert.equal(ws.name, 'Acme');
      assert.equal(ws.ownerId, me.id);
      assert.equal(ws.botCount, 0);
      assert.equal(typeof ws.id, 'string');
      assert.notEqual(ws.id, t.workspaceId);
      assert.match(ws.createdAt, ISO_UTC);
      assert.match(ws.updatedAt, ISO_UTC);

      assert.deepEqual(await owner.getWorkspace({ id: ws.id }), ws);
      const membership = await t.client({ workspaceId: ws.id }).getWorkspaceMember({});
      assert.equal(membership.role, 'owner');
      assert.equal(membership.userId, me.id);

      await t.client({ workspaceId: ws.id }).createBot({ name: 'counted' });
      assert.equal((await owner.getWorkspace({ id: ws.id })).botCount, 1);
      // The bot is in the new workspace only.
      assert.equal((await owner.getWorkspace({ id: t.workspaceId })).botCount, 0);
    });

    test('listWorkspaces lists every workspace of the account, page by page', async () => {
      const created = [];
      for (let i = 0; i < 5; i++) created.push((await owner.createWorkspace({ name: `listed-${i}` })).id);
      const all = (await owner.listWorkspaces({ pageSize: 100 })).workspaces.map((w) => w.id);
      assert.ok(all.includes(t.workspaceId), 'the first workspace is listed');
      for (const id of created) assert.ok(all.includes(id));

      const walked: string[] = [];
      let nextToken: string | undefined;
      let pages = 0;
      do {
        const page = await owner.listWorkspaces({ pageSize: 2, nextToken });
        assert.ok(page.workspaces.length <= 2);
        walked.push(...page.workspaces.map((w) => w.id));
        nextToken = page.meta.nextToken;
        pages++;
      } while (nextToken);
      assert.equal(pages, Math.ceil(all.length / 2));
      assert.deepEqual(walked, all, 'the walk serves the same workspaces in the same order');
      assert.equal(new Set(walked).size, walked.length);
      assert.deepEqual(
        (await owner.list.workspaces({}).collect()).map((w) => w.id),
        all,
      );

      // Another account sees only its own.
      const other = await otherAccount('lister@example.com');
      assert.deepEqual((await other.client.listWorkspaces({})).workspaces, []);
      const theirs = await other.client.createWorkspace({ name: 'theirs' });
      assert.deepEqual(
        (await other.client.listWorkspaces({})).workspaces.map((w) => w.id),
        [theirs.id],
      );
      assert.ok(!(await owner.list.workspaces({}).collect()).some((w) => w.id === theirs.id));
    });

    test('updateWorkspace changes the name and the handle', async () => {
      const ws = await owner.createWorkspace({ name: 'Before' });
      const updated = await owner.updateWorkspace({ id: ws.id, name: 'After', handle: 'after-team' });
      assert.equal(updated.name, 'After');
      assert.equal(updated.handle, 'after-team');
      assert.equal(updated.id, ws.id);
      assert.equal(updated.ownerId, ws.ownerId);
      assert.ok(updated.updatedAt >= ws.updatedAt);
      assert.deepEqual(await owner.getWorkspace({ id: ws.id }), updated);
      assert.deepEqual(
        (await owner.listWorkspaces({ handle: 'after-team' })).workspaces.map((w) => w.id),
        [ws.id],
      );

      const renamedOnly = await owner.updateWorkspace({ id: ws.id, name: 'After again' });
      assert.equal(renamedOnly.handle, 'after-team', 'a handle stays when not given');

      await assert.rejects(
        owner.updateWorkspace({ id: ws.id, handle: 'Not A Handle!' }),
        InvalidPayloadError,
      );
      await assert.rejects(owner.updateWorkspace({ id: ws.id, name: '' }), InvalidPayloadError);
      const other = await owner.createWorkspace({ name: 'Other' });
      await assert.rejects(owner.updateWorkspace({ id: other.id, handle: 'after-team' }), AlreadyExistsError);
      assert.equal((await owner.getWorkspace({ id: other.id })).handle, undefined);
      assert.equal((await owner.getWorkspace({ id: ws.id })).name, 'After again');
    });

    test('updateWorkspace needs an administrator', async () => {
      const ws = await owner.createWorkspace({ name: 'Guarded' });
      const developer = await memberOf(ws.id, 'ws-developer@example.com', 'developer');
      await assert.rejects(developer.updateWorkspace({ id: ws.id, name: 'Taken over' }), ForbiddenError);
      assert.equal((await owner.getWorkspace({ id: ws.id })).name, 'Guarded');
      // A member can read it.
      assert.equal((await developer.getWorkspace({ id: ws.id })).name, 'Guarded');
      const admin = await memberOf(ws.id, 'ws-admin@example.com', 'administrator');
      assert.equal(
        (await admin.updateWorkspace({ id: ws.id, name: 'Renamed by admin' })).name,
        'Renamed by admin',
      );
    });

    test('deleteWorkspace is for the owner only, and takes the workspace bots with it', async () => {
      const ws = await owner.createWorkspace({ name: 'Doomed' });
      const inWs = t.client({ workspaceId: ws.id });
      const bots = await Promise.all(
        [1, 2, 3].map(
          async (i) => (await inWs.createBot({ name: `doomed-${i}`, tags: { env: 'doomed' } })).bot,
        ),
      );
      await inWs.createBotApiKey({ botId: bots[0]?.id ?? assert.fail() });
      const admin = await memberOf(ws.id, 'doomed-admin@example.com', 'administrator');

      await assert.rejects(admin.deleteWorkspace({ id: ws.id }), ForbiddenError);
      assert.equal((await owner.getWorkspace({ id: ws.id })).botCount, 3, 'still there');

      assert.deepEqual(await owner.deleteWorkspace({ id: ws.id }), {});
      await assert.rejects(owner.getWorkspace({ id: ws.id }), ResourceNotFoundError);
      await assert.rejects(inWs.listBots({}), UnauthorizedError);
      assert.ok(!(await owner.list.workspaces({}).collect()).some((w) => w.id === ws.id));

      const db = t.server.store.db;
      const ids = bots.map((b) => b.id);
      assert.deepEqual(
        await db.selectFrom('bots').select('id').where('workspace_id', '=', ws.id).execute(),
        [],
      );
      assert.deepEqual(await db.selectFrom('bots').select('id').where('id', 'in', ids).execute(), []);
      assert.deepEqual(await db.selectFrom('tags').selectAll().where('resource_id', 'in', ids).execute(), []);
      assert.deepEqual(
        await db.selectFrom('bot_api_keys').selectAll().where('bot_id', 'in', ids).execute(),
        [],
      );
      assert.deepEqual(
        await db.selectFrom('workspace_members').selectAll().where('workspace_id', '=', ws.id).execute(),
        [],
      );
      // The first workspace is untouched.
      assert.equal((await owner.getWorkspace({ id: t.workspaceId })).id, t.workspaceId);
    });

    test('a workspace the caller is not in is not found', async () => {
      const other = await otherAccount('outsider@example.com');
      const theirs = await other.client.createWorkspace({ name: 'Private' });
      await assert.rejects(owner.getWorkspace({ id: theirs.id }), ResourceNotFoundError);
      await assert.rejects(owner.updateWorkspace({ id: theirs.id, name: 'Mine now' }), ResourceNotFoundError);
      await assert.rejects(owner.deleteWorkspace({ id: theirs.id }), ResourceNotFoundError);
      await assert.rejects(other.client.getWorkspace({ id: t.workspaceId }), ResourceNotFoundError);
      await assert.rejects(
        owner.getWorkspace({ id: 'wkspace_01NOSUCHWORKSPACE0000000000' }),
        ResourceNotFoundError,
      );
      assert.equal((await other.client.getWorkspace({ id: theirs.id })).name, 'Private', 'unchanged');
    });
  });
}
