// SDK workflows on Parley: a bot whose bundle takes `workflow_update` events (what @botpress/sdk 3.5 and
// later dispatch to `bot.on.workflowStart`, `workflowContinue` and `workflowTimeout`) is sent
// `workflow_started` when a workflow is created pending, `workflow_continued` when a waiting one is
// continued, and `workflow_timedout` when its `timeoutAt` passes; a bundle of an older SDK is sent none.
// The workflows are driven through the official client, as the bot.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@botpress/client';
import { chatBundle } from '../helpers/sdk-bundles.ts';
import { sdkBundle } from '../helpers/sdk-versions.ts';
import { waitFor } from '../helpers/runtime.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { ServeProcesses } from '../helpers/serve-processes.ts';
import type { ServedProcess } from '../helpers/serve-processes.ts';
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

/** The same workflow written with @botpress/sdk 7.2.4 itself, built as `bp build` builds it. */
const SDK7_WORKFLOW_BOT = `import * as sdk from '@botpress/sdk'

const bot = new sdk.Bot({ actions: {}, plugins: {} })

bot.on.workflowStart('approval', async ({ workflow, client }) => {
  await workflow.acknowledgeStartOfProcessing()
  await client.updateWorkflow({ id: workflow.id, status: 'listening' })
})
bot.on.workflowContinue('approval', async ({ workflow }) => {
  await workflow.setCompleted({ output: { approved: true } })
})
bot.on.workflowTimeout('approval', async ({ workflow, client }) => {
  await client.setState({ type: 'workflow', id: workflow.id, name: 'told', payload: { status: workflow.status } })
})

export default bot
`;

const skip = await sandboxSkip();

for (const store of await testStores()) {
  describe(`SDK workflows (${store.name})`, { skip: store.skip ?? skip }, () => {
    let t: TestServer;
    let bot: Client;
    let oldBot: Client;
    let sdk7Bot: Client;
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
      sdk7Bot = await asBot('sdk 7 workflows', await sdkBundle('7.2.4', SDK7_WORKFLOW_BOT));
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
      const started = await waitFor(
        'workflow_started',
        () => seen(bot, workflow.id, 'workflow_started'),
        30_000,
      );
      assert.deepEqual(started, {
        status: 'pending',
        eventType: 'workflow_update',
        eventWorkflowId: workflow.id,
        conversationId: conversation.id,
        userId: user.id,
      });
      await waitFor('listening', async () => (await statusOf(bot, workflow.id)) === 'listening');

      await bot.createEvent({ type: 'approved', payload: {}, workflowId: workflow.id });
      const continued = await waitFor('workflow_continued', () =>
        seen(bot, workflow.id, 'workflow_continued'),
      );
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
      const told = await waitFor(
        'workflow_timedout',
        () => seen(bot, workflow.id, 'workflow_timedout'),
        15_000,
      );
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

    test('an SDK 7.2.4 bot: its workflowStart, workflowContinue and workflowTimeout handlers run', async () => {
      const { workflow } = await sdk7Bot.createWorkflow({
        name: 'approval',
        status: 'pending',
        input: {},
        tags: {},
      });
      await waitFor('listening', async () => (await statusOf(sdk7Bot, workflow.id)) === 'listening', 30_000);
      await sdk7Bot.createEvent({ type: 'approved', payload: {}, workflowId: workflow.id });
      const done = await waitFor('completed', async () => {
        const current = (await sdk7Bot.getWorkflow({ id: workflow.id })).workflow;
        return current.status === 'completed' && current;
      });
      assert.deepEqual(done.output, { approved: true });

      const { workflow: late } = await sdk7Bot.createWorkflow({
        name: 'approval',
        status: 'pending',
        input: {},
        timeoutAt: new Date(Date.now() + 3000).toISOString(),
        tags: {},
      });
      const told = await waitFor('workflow_timedout', () => seen(sdk7Bot, late.id, 'told'), 30_000);
      assert.deepEqual(told, { status: 'timedout' });
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

const postgres = (await testStores()).find((s) => s.name === 'postgres');
describe('SDK workflows on two replicas of one PostgreSQL', { skip: postgres?.skip ?? skip }, () => {
  const servers = postgres && new ServeProcesses(postgres, 'workflows');
  after(() => servers?.close());

  test('each workflow times out once and its bot is told once, also when the servers were down at its timeoutAt', async () => {
    if (!servers) return;
    const first = await servers.serve();
    const [, workspaceId] = await first.proc.waitFor(/workspace id: (\S+)/);
    const clientOf = (served: ServedProcess, botId?: string) =>
      new Client({ apiUrl: served.url, token: servers.token, workspaceId, ...(botId && { botId }) });
    const { bot: created } = await clientOf(first).createBot({ name: 'replicated', code: WORKFLOW_BUNDLE });
    const second = await servers.serve();
    const bot = clientOf(second, created.id);

    const timingOut = async (count: number, inMs: number) => {
      const timeoutAt = new Date(Date.now() + inMs).toISOString();
      const made = await Promise.all(
        Array.from({ length: count }, () =>
          bot.createWorkflow({ name: 'approval', status: 'pending', input: {}, timeoutAt, tags: {} }),
        ),
      );
      return made.map(({ workflow }) => workflow.id);
    };
    const timedOutUpdates = async () => {
      const events = await bot.list.events({ type: 'workflow_update' }).collect();
      return events
        .filter((e) => (e.payload as { type: string }).type === 'workflow_timedout')
        .map((e) => (e.payload as { workflow: { id: string } }).workflow.id)
        .sort();
    };

    // Both replicas sweep every 200 ms: each workflow is theirs to time out at the same moment.
    const racing = await timingOut(12, 2000);
    await waitFor('12 timed out', async () => (await timedOutUpdates()).length >= 12, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(await timedOutUpdates(), [...racing].sort(), 'one workflow_timedout per workflow');

    // Down when its timeoutAt passes: the next server to start times it out.
    const [waiting] = await timingOut(1, 2500);
    assert.ok(waiting);
    await waitFor(
      'listening',
      async () => (await bot.getWorkflow({ id: waiting })).workflow.status === 'listening',
      30_000,
    );
    for (const served of [first, second]) {
      served.proc.child.kill('SIGKILL');
      await served.proc.exited;
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const third = await servers.serve();
    const after = clientOf(third, created.id);
    const told = await waitFor(
      'workflow_timedout after the restart',
      () =>
        after
          .getState({ type: 'workflow', id: waiting, name: 'workflow_timedout' })
          .then(({ state }) => state.payload)
          .catch(() => undefined),
      30_000,
    );
    assert.equal((told as { status: string }).status, 'timedout');
  });
});
