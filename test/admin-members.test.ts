import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  AlreadyExistsError,
  ForbiddenError,
  ResourceNotFoundError,
  UnauthorizedError,
} from '@botpress/client';
import type { Client } from '@botpress/client';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

type Role = 'viewer' | 'billing' | 'developer' | 'manager' | 'administrator' | 'owner';

interface Member {
  id: string;
  userId?: string;
  email: string;
  role: Role;
  createdAt: string;
}

for (const store of await testStores()) {
  describe(`Admin API: workspace members and roles (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let emailCounter = 0;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t.close());

    interface Workspace {
      id: string;
      /** The owner's client in this workspace. */
      owner: Client;
    }

    async function freshWorkspace(name: string): Promise<Workspace> {
      const ws = await t.client().createWorkspace({ name });
      return { id: ws.id, owner: t.client({ workspaceId: ws.id }) };
    }

    /** Adds a member with `by` and gives them a token from the domain, as an operator would. */
    async function addMember(
      ws: Workspace,
      role: Role,
      by: Client = ws.owner,
    ): Promise<{ member: Member; client: Client; token: string }> {
      const email = `${role}-${++emailCounter}@example.com`;
      const member = (await by.createWorkspaceMember({ email, role })) as Member;
      const account = await t.server.domain.accounts.findByEmail(email);
      assert.ok(account, 'the member has an account');
      assert.equal(member.userId, account.id);
      const token = (await t.server.domain.accounts.createToken(account.id, 'note')).value;
      return { member, token, client: t.client({ token, workspaceId: ws.id }) };
    }

    const botIdsOf = async (workspaceId: string): Promise<string[]> =>
      (
        await t.server.store.db
          .selectFrom('bots')
          .select('id')
          .where('workspace_id', '=', workspaceId)
          .execute()
      ).map((r) => r.id);

    for (const role of ['viewer', 'billing'] as const) {
      test(`a ${role} can read bots but not create, update or delete them, and nothing is written`, async () => {
        const ws = await freshWorkspace(role);
        const { bot } = await ws.owner.createBot({ name: 'existing', tags: { env: 'prod' } });
        const { client: viewer, member } = await addMember(ws, role);
        assert.equal(member.role, role);

        assert.deepEqual(
          (await viewer.listBots({})).bots.map((b) => b.id),
          [bot.id],
        );
        // A role that may not change the bot does not see its signing secret.
        assert.deepEqual((await viewer.getBot({ id: bot.id })).bot, { ...bot, signingSecret: '' });

        const before = await botIdsOf(ws.id);
        await assert.rejects(viewer.createBot({ name: 'nope' }), ForbiddenError);
        await assert.rejects(
          viewer.updateBot({ id: bot.id, name: 'changed', tags: { env: 'x' } }),
          ForbiddenError,
        );
        await assert.rejects(viewer.deleteBot({ id: bot.id }), ForbiddenError);
        await assert.rejects(viewer.createBotApiKey({ botId: bot.id }), ForbiddenError);
        await assert.rejects(
          viewer.createWorkspaceMember({ email: 'friend@example.com', role: 'viewer' }),
          ForbiddenError,
        );

        assert.deepEqual(await botIdsOf(ws.id), before, 'no bot was created or deleted');
        assert.deepEqual((await ws.owner.getBot({ id: bot.id })).bot, bot, 'the bot is unchanged');
        assert.equal(await t.server.domain.accounts.findByEmail('friend@example.com'), undefined);
      });
    }

    test('a developer can create, update and delete bots but not manage members', async () => {
      const ws = await freshWorkspace('developer');
      const { client: dev } = await addMember(ws, 'developer');
      const { bot } = await dev.createBot({ name: 'by-dev' });
      assert.deepEqual(await botIdsOf(ws.id), [bot.id]);
      assert.equal((await ws.owner.getBot({ id: bot.id })).bot.name, 'by-dev');
      assert.equal((await dev.updateBot({ id: bot.id, name: 'by-dev-2' })).bot.name, 'by-dev-2');
      const key = await dev.createBotApiKey({ botId: bot.id, note: 'dev key' });
      assert.match(key.value, /^bp_bak_/);
      await dev.deleteBot({ id: bot.id });
      assert.deepEqual(await botIdsOf(ws.id), []);
      await assert.rejects(
        dev.createWorkspaceMember({ email: 'x-dev@example.com', role: 'viewer' }),
        ForbiddenError,
      );
      const { member: viewer } = await addMember(ws, 'viewer');
      await assert.rejects(dev.deleteWorkspaceMember({ id: viewer.id }), ForbiddenError);
      await assert.rejects(dev.updateWorkspaceMember({ id: viewer.id, role: 'developer' }), ForbiddenError);
      const still = (await ws.owner.listWorkspaceMembers({})).members.find((m) => m.id === viewer.id);
      assert.equal(still?.role, 'viewer');
    });

    test('a manager adds members up to manager but cannot grant administrator or owner', async () => {
      const ws = await freshWorkspace('manager');
      const { client: manager } = await addMember(ws, 'manager');
      const countMembers = async () =>
        (await ws.owner.listWorkspaceMembers({ pageSize: 100 })).members.length;

      const { member: dev } = await addMember(ws, 'developer', manager);
      assert.equal(dev.role, 'developer');
      const { member: peer } = await addMember(ws, 'manager', manager);
      assert.equal(peer.role, 'manager');

      const before = await countMembers();
      await assert.rejects(
        manager.createWorkspaceMember({ email: 'would-be-admin@example.com', role: 'administrator' }),
        ForbiddenError,
      );
      await assert.rejects(
        manager.createWorkspaceMember({ email: 'would-be-owner@example.com', role: 'owner' }),
        ForbiddenError,
      );
      await assert.rejects(
        manager.updateWorkspaceMember({ id: dev.id, role: 'administrator' }),
        ForbiddenError,
      );
      assert.equal(await countMembers(), before);
      const devNow = (await ws.owner.listWorkspaceMembers({})).members.find((m) => m.id === dev.id);
      assert.equal(devNow?.role, 'developer', 'the role was not raised');

      // An administrator's membership is above a manager.
      const { member: admin } = await addMember(ws, 'administrator');
      await assert.rejects(manager.updateWorkspaceMember({ id: admin.id, role: 'viewer' }), ForbiddenError);
      await assert.rejects(manager.deleteWorkspaceMember({ id: admin.id }), ForbiddenError);
      // Within their rank, a manager manages.
      assert.equal((await manager.updateWorkspaceMember({ id: dev.id, role: 'viewer' })).role, 'viewer');
    });

    test("the owner's membership cannot be deleted or changed, by anyone", async () => {
      const ws = await freshWorkspace('owner stays');
      const me = (await ws.owner.getWorkspaceMember({})) as Member;
      assert.equal(me.role, 'owner');
      const { client: admin } = await addMember(ws, 'administrator');
      const { client: manager } = await addMember(ws, 'manager');

      await assert.rejects(ws.owner.deleteWorkspaceMember({ id: me.id }), ForbiddenError);
      await assert.rejects(admin.deleteWorkspaceMember({ id: me.id }), ForbiddenError);
      await assert.rejects(manager.deleteWorkspaceMember({ id: me.id }), ForbiddenError);
      await assert.rejects(admin.updateWorkspaceMember({ id: me.id, role: 'viewer' }), ForbiddenError);
      await assert.rejects(ws.owner.updateWorkspaceMember({ id: me.id, role: 'viewer' }), ForbiddenError);

      const still = (await ws.owner.listWorkspaceMembers({})).members.find((m) => m.id === me.id);
      assert.equal(still?.role, 'owner');
      assert.equal((await ws.owner.createBot({ name: 'owner still acts' })).bot.name, 'owner still acts');
    });

    test('listWorkspaceMembers, getWorkspaceMember, updateWorkspaceMember and deleteWorkspaceMember', async () => {
      const ws = await freshWorkspace('members');
      const account = (await t.client().getAccount({})).account;
      const added = [];
      for (const role of ['viewer', 'developer', 'billing'] as const) added.push(await addMember(ws, role));

      const listed = (await ws.owner.listWorkspaceMembers({})).members as Member[];
      assert.equal(listed.length, 4);
      const owner = listed.find((m) => m.role === 'owner');
      assert.equal(owner?.userId, account.id);
      assert.equal(owner?.email, account.email);
      for (const { member } of added) {
        const found = listed.find((m) => m.id === member.id);
        assert.deepEqual(found, member, 'listed as created');
      }

      // Pages of one walk every member once.
      const walked: string[] = [];
      let nextToken: string | undefined;
      do {
        const page = await ws.owner.listWorkspaceMembers({ pageSize: 1, nextToken });
        assert.ok(page.members.length <= 1);
        walked.push(...page.members.map((m) => m.id));
        nextToken = page.meta.nextToken;
      } while (nextToken);
      assert.deepEqual([...walked].sort(), listed.map((m) => m.id).sort());
      assert.equal((await ws.owner.list.workspaceMembers({}).collect()).length, 4);

      const [viewer, developer] = added;
      assert.ok(viewer && developer);
      assert.deepEqual(
        await viewer.client.getWorkspaceMember({}),
        viewer.member,
        'getWorkspaceMember is "me"',
      );
      assert.equal(((await ws.owner.getWorkspaceMember({})) as Member).id, owner?.id);

      await assert.rejects(viewer.client.createBot({ name: 'not yet' }), ForbiddenError);
      const promoted = await ws.owner.updateWorkspaceMember({ id: viewer.member.id, role: 'developer' });
      assert.equal(promoted.role, 'developer');
      assert.equal(promoted.id, viewer.member.id);
      assert.equal(((await viewer.client.getWorkspaceMember({})) as Member).role, 'developer');
      assert.equal((await viewer.client.createBot({ name: 'now allowed' })).bot.name, 'now allowed');

      assert.deepEqual(await ws.owner.deleteWorkspaceMember({ id: developer.member.id }), {});
      const after = (await ws.owner.listWorkspaceMembers({})).members.map((m) => m.id);
      assert.ok(!after.includes(developer.member.id));
      assert.equal(after.length, 3);
      await assert.rejects(developer.client.listBots({}), UnauthorizedError, 'a removed member is out');
      await assert.rejects(
        ws.owner.deleteWorkspaceMember({ id: developer.member.id }),
        ResourceNotFoundError,
      );
      await assert.rejects(
        ws.owner.updateWorkspaceMember({ id: 'member_01NOSUCHMEMBER00000000000', role: 'viewer' }),
        ResourceNotFoundError,
      );

      // Any member may leave.
      const billing = added[2];
      assert.ok(billing);
      await billing.client.deleteWorkspaceMember({ id: billing.member.id });
      await assert.rejects(billing.client.listBots({}), UnauthorizedError);
    });

    test('a member of another workspace is not found here', async () => {
      const a = await freshWorkspace('A');
      const b = await freshWorkspace('B');
      const { member } = await addMember(b, 'viewer');
      await assert.rejects(
        a.owner.updateWorkspaceMember({ id: member.id, role: 'developer' }),
        ResourceNotFoundError,
      );
      await assert.rejects(a.owner.deleteWorkspaceMember({ id: member.id }), ResourceNotFoundError);
      const inB = (await b.owner.listWorkspaceMembers({})).members.find((m) => m.id === member.id);
      assert.equal(inB?.role, 'viewer');
    });

    test('adding the same email twice is AlreadyExistsError', async () => {
      const ws = await freshWorkspace('duplicates');
      const first = await ws.owner.createWorkspaceMember({ email: 'dup@example.com', role: 'viewer' });
      assert.equal(first.email, 'dup@example.com');
      await assert.rejects(
        ws.owner.createWorkspaceMember({ email: 'dup@example.com', role: 'developer' }),
        AlreadyExistsError,
      );
      await assert.rejects(
        ws.owner.createWorkspaceMember({ email: 'Dup@Example.com', role: 'viewer' }),
        AlreadyExistsError,
        'emails are compared case-insensitively',
      );
      const dups = (await ws.owner.listWorkspaceMembers({})).members.filter(
        (m) => m.email === 'dup@example.com',
      );
      assert.equal(dups.length, 1);
      assert.equal(dups[0]?.role, 'viewer', 'the first membership is unchanged');
      // The same account may be a member of another workspace.
      const other = await freshWorkspace('other');
      const again = await other.owner.createWorkspaceMember({ email: 'dup@example.com', role: 'developer' });
      assert.equal(again.userId, first.userId);
    });
  });
}
