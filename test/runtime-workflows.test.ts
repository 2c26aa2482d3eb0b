import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, ResourceNotFoundError } from '@botpress/client';
import {
  assertId,
  assertNoRepeats,
  assertTimestamp,
  createTestBot,
  ids,
  rawRuntime,
  rejects4xx,
  rejectsWith,
  sleep,
  unique,
  unknownId,
  walkPages,
} from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { whileChangedOutside } from './helpers/held-rows.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

for (const store of await testStores()) {
  describe(`runtime workflows (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let conversationId: string;
    let userId: string;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t);
      conversationId = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
      userId = (await bot.client.createUser({ tags: {} })).user.id;
    });
    after(() => t.close());

    test('createWorkflow answers the workflow, and getWorkflow reads it back', async () => {
      const timeoutAt = new Date(Date.now() + 3_600_000).toISOString();
      const { workflow } = await bot.client.createWorkflow({
        name: 'onboarding',
        status: 'pending',
        input: { step: 'start', n: 1 },
        conversationId,
        userId,
        timeoutAt,
        tags: { flow: 'a', 'chat:origin': 'web' },
      });
      assertId(workflow.id, 'wfl');
      assertTimestamp(workflow.createdAt, 'createdAt');
      assertTimestamp(workflow.updatedAt, 'updatedAt');
      assert.equal(workflow.name, 'onboarding');
      assert.equal(workflow.status, 'pending');
      assert.deepEqual(workflow.input, { step: 'start', n: 1 });
      assert.deepEqual(workflow.output, {});
      assert.equal(workflow.conversationId, conversationId);
      assert.equal(workflow.userId, userId);
      assert.equal(workflow.timeoutAt, timeoutAt);
      assert.deepEqual(workflow.tags, { flow: 'a', 'chat:origin': 'web' });
      assert.equal(workflow.completedAt ?? undefined, undefined);

      const got = await bot.client.getWorkflow({ id: workflow.id });
      assert.deepEqual(got.workflow, workflow);
    });

    test('a workflow created without timeoutAt still has one', async () => {
      const { workflow } = await bot.client.createWorkflow({ name: 'bare', status: 'in_progress' });
      assert.equal(workflow.status, 'in_progress');
      assertTimestamp(workflow.timeoutAt, 'timeoutAt');
      assert.ok(Date.parse(workflow.timeoutAt) > Date.now(), 'the default timeout is in the future');
      assert.deepEqual(workflow.input, {});
      assert.deepEqual(workflow.tags, {});
    });

    test('createWorkflow answers 201', async () => {
      const res = await rawRuntime(t, bot, 'POST', '/v1/chat/workflows', {
        name: 'raw',
        status: 'listening',
      });
      assert.equal(res.status, 201);
      const { workflow } = res.body as { workflow: { id: string; status: string } };
      assertId(workflow.id, 'wfl');
      assert.equal(workflow.status, 'listening');
    });

    test('unknown ids answer ResourceNotFound', async () => {
      const id = unknownId('wfl');
      await rejectsWith(bot.client.getWorkflow({ id }), ResourceNotFoundError);
      await rejectsWith(bot.client.updateWorkflow({ id, status: 'in_progress' }), ResourceNotFoundError);
      await rejectsWith(bot.client.deleteWorkflow({ id }), ResourceNotFoundError);
      await rejectsWith(
        bot.client.createWorkflow({ name: 'w', status: 'pending', conversationId: unknownId('conv') }),
        ResourceNotFoundError,
      );
      await rejectsWith(
        bot.client.createWorkflow({ name: 'w', status: 'pending', userId: unknownId('user') }),
        ResourceNotFoundError,
      );
    });

    test('invalid workflow bodies answer InvalidPayload naming the field', async () => {
      await rejectsWith(
        bot.client.createWorkflow({ name: 'w', status: 'completed' } as never),
        InvalidPayloadError,
        /status/,
      );
      await rejectsWith(
        bot.client.createWorkflow({ status: 'pending' } as never),
        InvalidPayloadError,
        /name/,
      );
    });

    test('status transitions; completing sets completedAt and output', async () => {
      const { workflow } = await bot.client.createWorkflow({ name: 'steps', status: 'pending' });
      for (const status of ['in_progress', 'listening', 'paused', 'in_progress'] as const) {
        const { workflow: w } = await bot.client.updateWorkflow({ id: workflow.id, status });
        assert.equal(w.status, status);
        assert.equal(w.completedAt ?? undefined, undefined, `no completedAt while ${status}`);
      }
      await sleep(5);
      const { workflow: done } = await bot.client.updateWorkflow({
        id: workflow.id,
        status: 'completed',
        output: { result: 42 },
      });
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.output, { result: 42 });
      assertTimestamp(done.completedAt, 'completedAt');
      assert.ok(done.completedAt! >= workflow.createdAt);
      const { workflow: got } = await bot.client.getWorkflow({ id: workflow.id });
      assert.equal(got.status, 'completed');
      assert.equal(got.completedAt, done.completedAt);
    });

    test('cancelling or failing a workflow sets completedAt; failureReason is kept', async () => {
      const { workflow: a } = await bot.client.createWorkflow({ name: 'c', status: 'in_progress' });
      const { workflow: cancelled } = await bot.client.updateWorkflow({ id: a.id, status: 'cancelled' });
      assert.equal(cancelled.status, 'cancelled');
      assertTimestamp(cancelled.completedAt, 'completedAt');

      const { workflow: b } = await bot.client.createWorkflow({ name: 'f', status: 'listening' });
      const { workflow: failed } = await bot.client.updateWorkflow({
        id: b.id,
        status: 'failed',
        failureReason: 'the API was down',
      });
      assert.equal(failed.status, 'failed');
      assert.equal(failed.failureReason, 'the API was down');
      assertTimestamp(failed.completedAt, 'completedAt');
    });

    test('the status of a finished workflow cannot change', async () => {
      for (const end of ['completed', 'cancelled', 'failed'] as const) {
        const { workflow } = await bot.client.createWorkflow({ name: `end-${end}`, status: 'in_progress' });
        await bot.client.updateWorkflow({ id: workflow.id, status: end });
        await rejects4xx(bot.client.updateWorkflow({ id: workflow.id, status: 'in_progress' }));
        const { workflow: got } = await bot.client.getWorkflow({ id: workflow.id });
        assert.equal(got.status, end, `a ${end} workflow stays ${end}`);
      }
    });

    test(
      'an update never overwrites a status changed while it ran (a workflow timed out meanwhile stays timed out)',
      { skip: store.name === 'postgres' ? false : 'the row is changed from outside with PostgreSQL' },
      async () => {
        const { workflow } = await bot.client.createWorkflow({ name: 'raced', status: 'listening' });
        assert.ok(t.settings.databaseUrl);
        // As the sweeper does: the workflow timed out in a transaction committed while the update runs.
        await rejectsWith(
          whileChangedOutside(
            t.settings.databaseUrl,
            "update workflows set status = 'timedout', completed_at = updated_at where id = $1",
            [workflow.id],
            () => bot.client.updateWorkflow({ id: workflow.id, status: 'in_progress' }),
          ),
          InvalidPayloadError,
          /timedout/,
        );
        const { workflow: got } = await bot.client.getWorkflow({ id: workflow.id });
        assert.equal(got.status, 'timedout');
      },
    );

    test('updateWorkflow sets tags (null deletes), output, timeoutAt and userId', async () => {
      const { workflow } = await bot.client.createWorkflow({
        name: 'tags',
        status: 'pending',
        tags: { a: '1', b: '2' },
      });
      const timeoutAt = new Date(Date.now() + 7_200_000).toISOString();
      const { workflow: updated } = await bot.client.updateWorkflow({
        id: workflow.id,
        tags: { a: null, c: '3' },
        output: { partial: true },
        timeoutAt,
        userId,
      });
      assert.deepEqual(updated.tags, { b: '2', c: '3' });
      assert.deepEqual(updated.output, { partial: true });
      assert.equal(updated.timeoutAt, timeoutAt);
      assert.equal(updated.userId, userId);
      assert.equal(updated.status, 'pending');
    });

    test('deleteWorkflow removes it', async () => {
      const { workflow } = await bot.client.createWorkflow({ name: 'gone', status: 'pending' });
      assert.deepEqual(await bot.client.deleteWorkflow({ id: workflow.id }), {});
      await rejectsWith(bot.client.getWorkflow({ id: workflow.id }), ResourceNotFoundError);
      await rejectsWith(bot.client.deleteWorkflow({ id: workflow.id }), ResourceNotFoundError);
    });

    test('listWorkflows filters by name, statuses, conversation, user, parent and tags, newest first', async () => {
      const name = unique('flow');
      const grp = unique('grp');
      const conv2 = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
      const w1 = (
        await bot.client.createWorkflow({ name, status: 'pending', conversationId, tags: { grp, k: 'x' } })
      ).workflow.id;
      const w2 = (
        await bot.client.createWorkflow({
          name,
          status: 'in_progress',
          conversationId: conv2,
          userId,
          tags: { grp },
        })
      ).workflow.id;
      const w3 = (
        await bot.client.createWorkflow({
          name,
          status: 'listening',
          parentWorkflowId: w1,
          tags: { grp, k: 'y' },
        })
      ).workflow.id;
      const other = (
        await bot.client.createWorkflow({ name: `${name}-other`, status: 'pending', tags: { grp } })
      ).workflow.id;
      await bot.client.updateWorkflow({ id: w2, status: 'completed' });

      assert.deepEqual(ids((await bot.client.listWorkflows({ name })).workflows), [w3, w2, w1]);
      assert.deepEqual(ids((await bot.client.listWorkflows({ tags: { grp } })).workflows), [
        other,
        w3,
        w2,
        w1,
      ]);
      assert.deepEqual(ids((await bot.client.listWorkflows({ tags: { grp, k: 'y' } })).workflows), [w3]);
      assert.deepEqual(ids((await bot.client.listWorkflows({ name, conversationId })).workflows), [w1]);
      assert.deepEqual(ids((await bot.client.listWorkflows({ name, userId })).workflows), [w2]);
      assert.deepEqual(ids((await bot.client.listWorkflows({ parentWorkflowId: w1 })).workflows), [w3]);
      assert.deepEqual(ids((await bot.client.listWorkflows({ name, statuses: ['completed'] })).workflows), [
        w2,
      ]);
      assert.deepEqual(
        ids((await bot.client.listWorkflows({ name, statuses: ['pending', 'listening'] })).workflows),
        [w3, w1],
      );
      const p1 = await bot.client.listWorkflows({ name, pageSize: 2 });
      assert.deepEqual(ids(p1.workflows), [w3, w2]);
      const p2 = await bot.client.listWorkflows({ name, pageSize: 2, nextToken: p1.meta.nextToken });
      assert.deepEqual(ids(p2.workflows), [w1]);
      assert.equal(p2.meta.nextToken, undefined);
    });

    test('a walk over workflows never repeats or skips under concurrent writes', async () => {
      const name = unique('walk');
      const stable: string[] = [];
      for (let i = 0; i < 11; i++)
        stable.push((await bot.client.createWorkflow({ name, status: 'pending' })).workflow.id);
      const pages = await walkPages(
        async (nextToken) => {
          const page = await bot.client.listWorkflows({ name, pageSize: 3, nextToken });
          return { ids: ids(page.workflows), nextToken: page.meta.nextToken };
        },
        async () => {
          await bot.client.createWorkflow({ name, status: 'pending' });
        },
      );
      const served = pages.flat();
      assertNoRepeats(served);
      assert.deepEqual(
        stable.filter((id) => !served.includes(id)),
        [],
      );
    });

    test('getOrCreateWorkflow with discriminateByTags answers meta.created', async () => {
      const key = unique('key');
      const first = await bot.client.getOrCreateWorkflow({
        name: 'singleton',
        status: 'pending',
        tags: { key, attempt: '1' },
        discriminateByTags: ['key'],
      });
      assert.equal(first.meta.created, true);
      assertId(first.workflow.id, 'wfl');
      const again = await bot.client.getOrCreateWorkflow({
        name: 'singleton',
        status: 'pending',
        tags: { key, attempt: '2' },
        discriminateByTags: ['key'],
      });
      assert.equal(again.meta.created, false);
      assert.equal(again.workflow.id, first.workflow.id);
      const fresh = await bot.client.getOrCreateWorkflow({
        name: 'singleton',
        status: 'pending',
        tags: { key: `${key}-2` },
        discriminateByTags: ['key'],
      });
      assert.equal(fresh.meta.created, true);
      assert.notEqual(fresh.workflow.id, first.workflow.id);
    });

    test('concurrent getOrCreateWorkflow callers create one workflow', async () => {
      const key = unique('race');
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          bot.client.getOrCreateWorkflow({
            name: 'race',
            status: 'pending',
            tags: { key },
            discriminateByTags: ['key'],
          }),
        ),
      );
      assert.equal(new Set(results.map((r) => r.workflow.id)).size, 1);
      assert.equal(results.filter((r) => r.meta.created).length, 1);
      assert.equal((await bot.client.listWorkflows({ tags: { key } })).workflows.length, 1);
    });

    test('workflows belong to one bot', async () => {
      const other = await createTestBot(t, 'other-bot');
      const { workflow } = await bot.client.createWorkflow({ name: 'private', status: 'pending' });
      await rejectsWith(other.client.getWorkflow({ id: workflow.id }), ResourceNotFoundError);
      await rejectsWith(
        other.client.updateWorkflow({ id: workflow.id, status: 'cancelled' }),
        ResourceNotFoundError,
      );
      await rejectsWith(other.client.deleteWorkflow({ id: workflow.id }), ResourceNotFoundError);
      assert.equal((await bot.client.getWorkflow({ id: workflow.id })).workflow.status, 'pending');
      assert.deepEqual((await other.client.listWorkflows({ name: 'private' })).workflows, []);
    });
  });
}
