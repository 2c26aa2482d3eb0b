// SDK workflows on Parley: a bot whose bundle takes `workflow_update` events (what @botpress/sdk 3.5 and
// later dispatch to `bot.on.workflowStart`, `workflowContinue` and `workflowTimeout`) is sent
// `workflow_started` when a workflow is created pending, `workflow_continued` when a waiting one is
// continued, and `workflow_timedout` when its `timeoutAt` passes; a bundle of an older SDK is sent none.
// The workflows are driven through the official client, as the bot.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@botpress/client';
import { chatBundle } from '../helpers/sdk-bundles.ts';
import { waitFor } from '../helpers/runtime.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';

/**
 * The bundle `bp build` makes of a bot with an `approval` workflow, reduced to what SDK 7's server does
 * with a `workflow_update` (packages/sdk/src/bot/server/workflows/update-handler.ts): dispatch by
 * `payload.type` and the workflow's name, the handler acknowledging the start (`in_progress` with the
 * event's id) as `workflow.acknowledgeStartOfProcessing()` does. Each handler keeps what it was given in a
 * workflow state named after the update, so the test sees it; `approval` then listens, and completes
 * when continued.
 */
const WORKFLOW_BUNDLE = `
const call = async (botId, method, path, body) => {
  const res = await fetch(process.env.BP_API_URL + '/v1/chat' + path, {
    method,
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.BP_TOKEN, 'x-bot-id': botId },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(method + ' ' + path + ': ' + res.status + ' ' + (await res.text()));
  return res.json();
};
module.exports = {
  handler: async (req) => {
    if (req.headers['x-bp-operation'] !== 'event_received' || req.headers['x-bp-type'] !== 'workflow_update')
      return { status: 200 };
    const botId = req.headers['x-bot-id'];
    const event = JSON.parse(req.body).event;
    const { type, workflow, conversation, user } = event.payload;
    if (workflow.name !== 'approval') return { status: 200 };
    await call(botId, 'POST', '/states/workflow/' + workflow.id + '/' + type, {
      payload: {
        status: workflow.status,
        eventType: event.type,
        eventWorkflowId: event.payload.workflow.id,
        conversationId: conversation ? conversation.id : null,
        userId: user ? user.id : null,
      },
    });
    const update = (body) => call(botId, 'PUT', '/workflows/' + workflow.id, body);
    if (type === 'workflow_started') {
      await update({ status: 'in_progress', eventId: event.id });
      await update({ status: 'listening' });
    } else if (type === 'workflow_continued') {
      await update({ status: 'completed', output: { approved: true } });
    }
    return { status: 200 };
  },
};
`;

const skip = await sandboxSkip();

for (const store of await testStores()) {
  describe(`SDK workflows (${store.name})`, { skip: store.skip ?? skip }, () => {
    let t: TestServer;
    let bot: Client;
    let oldBot: Client;
    before(async () => {
      t = await startTestServer(store);
      const admin = t.client();
      const asBot = async (name: string, code: string) => {
        const created = await admin.createBot({ name, code });
        return t.client({ botId: created.bot.id });
      };
      bot = await asBot('workflows', WORKFLOW_BUNDLE);
      // A bundle of an SDK that knows nothing of workflow updates (0.10 to 3.4).
      oldBot = await asBot('no-workflows', chatBundle('await reply(text);'));
    });
    after(() => t?.close());

    /** What the bot's handler was given for `update` of `workflowId` (its workflow state), once it ran. */
    const seen = (client: Client, workflowId: string, update: string) =>
      client
        .getState({ type: 'workflow', id: workflowId, name: update })
        .then(({ state }) => state.payload as Record<string, unknown>)
        .catch(() => undefined);

    const statusOf = async (client: Client, workflowId: string) =>
      (await client.getWorkflow({ id: workflowId })).workflow.status;

    const updatesOf = async (client: Client, workflowId: string) => {
      const { events } = await client.listEvents({ type: 'workflow_update', pageSize: 100 });
      return events
        .filter((e) => (e.payload as { workflow: { id: string } }).workflow.id === workflowId)
        .map((e) => (e.payload as { type: string }).type)
        .reverse();
    };

    test('a workflow starts, listens, is continued by an event naming it, and completes', async () => {
      const { conversation } = await bot.createConversation({ channel: 'channel', tags: {} });
      const { user } = await bot.createUser({ tags: {} });
      const { workflow } = await bot.createWorkflow({
        name: 'approval',
        status: 'pending',
        input: { amount: 12 },
        conversationId: conversation.id,
        userId: user.id,
        tags: {},
      });
      const started = await waitFor('workflow_started', () => seen(bot, workflow.id, 'workflow_started'), 30_000);
      assert.deepEqual(started, {
        status: 'pending',
        eventType: 'workflow_update',
        eventWorkflowId: workflow.id,
        conversationId: conversation.id,
        userId: user.id,
      });
      await waitFor('listening', async () => (await statusOf(bot, workflow.id)) === 'listening');

      await bot.createEvent({ type: 'approved', payload: {}, workflowId: workflow.id });
      const continued = await waitFor('workflow_continued', () => seen(bot, workflow.id, 'workflow_continued'));
      assert.equal(continued.status, 'in_progress', 'the event set it in progress again');
      const done = await waitFor('completed', async () => {
        const current = (await bot.getWorkflow({ id: workflow.id })).workflow;
        return current.status === 'completed' && current;
      });
      assert.deepEqual(done.output, { approved: true });
      assert.ok(done.completedAt);
      assert.deepEqual(await updatesOf(bot, workflow.id), ['workflow_started', 'workflow_continued']);
    });

    test('getOrCreateWorkflow starts the workflow it creates, once; updateWorkflow continues a listening one', async () => {
      const ask = () =>
        bot.getOrCreateWorkflow({
          name: 'approval',
          status: 'pending',
          input: {},
          tags: {},
          discriminateByStatusGroup: 'active',
        });
      const first = await ask();
      assert.equal(first.meta?.created ?? true, true);
      const id = first.workflow.id;
      await waitFor('listening', async () => (await statusOf(bot, id)) === 'listening', 30_000);
      const again = await ask();
      assert.equal(again.workflow.id, id, 'the active one is found, not started again');

      await bot.updateWorkflow({ id, status: 'in_progress' });
      await waitFor('completed', async () => (await statusOf(bot, id)) === 'completed');
      assert.deepEqual(await updatesOf(bot, id), ['workflow_started', 'workflow_continued']);
    });

    test('a workflow past its timeoutAt times out, and its bot is told once', async () => {
      const timeoutAt = new Date(Date.now() + 3000).toISOString();
      const { workflow } = await bot.createWorkflow({
        name: 'approval',
        status: 'pending',
        input: {},
        timeoutAt,
        tags: {},
      });
      await waitFor('listening', async () => (await statusOf(bot, workflow.id)) === 'listening', 30_000);
      const told = await waitFor('workflow_timedout', () => seen(bot, workflow.id, 'workflow_timedout'), 15_000);
      assert.equal(told.status, 'timedout');
      const { workflow: after } = await bot.getWorkflow({ id: workflow.id });
      assert.equal(after.status, 'timedout');
      assert.ok(after.completedAt);
      // An event naming it no longer continues it.
      await bot.createEvent({ type: 'approved', payload: {}, workflowId: workflow.id });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.deepEqual(await updatesOf(bot, workflow.id), ['workflow_started', 'workflow_timedout']);
      assert.equal(await statusOf(bot, workflow.id), 'timedout');
    });

    test('a bundle of an SDK without workflows is sent no workflow updates; its workflows still time out', async () => {
      const { workflow } = await oldBot.createWorkflow({
        name: 'approval',
        status: 'pending',
        input: {},
        timeoutAt: new Date(Date.now() + 1000).toISOString(),
        tags: {},
      });
      await waitFor('timedout', async () => (await statusOf(oldBot, workflow.id)) === 'timedout', 15_000);
      const { events } = await oldBot.listEvents({ pageSize: 100 });
      assert.deepEqual(
        events.map((e) => e.type),
        [],
        'no event at all was queued for it',
      );
    });
  });
}
