// A workspace may have at most PARLEY_ENGINE_WORKSPACE_BACKLOG events waiting for its bots: past it a
// new message (or event, or webhook request) is refused with 429 RateLimited and Retry-After, nothing
// acknowledged is lost, other workspaces are not refused, and once the backlog goes down it is taken again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import type { Client } from '@botpress/client';
import { isApiError } from '@botpress/client';
import { BACKLOG_RETRY_AFTER_SECONDS } from '../../src/domain/queue/backlog-quota.ts';
import { deployWithCli } from '../helpers/chat-bots.ts';
import { waitFor } from '../helpers/runtime.ts';
import { rawChat } from '../helpers/sse.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';

/** The backlog a workspace may have, set small for the test. */
const BACKLOG = 20;

for (const store of await testStores()) {
  describe(`a workspace's backlog of events past its quota (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store, { engineWorkspaceBacklog: String(BACKLOG) });
    });
    after(() => t.close());

    /** A bot without code in a new workspace (its events wait: pending), its chat URL and a Runtime client. */
    async function botOfNewWorkspace(name: string) {
      const workspace = await t.client().createWorkspace({ name });
      const admin = t.client({ workspaceId: workspace.id });
      const { bot } = await admin.createBot({ name });
      const { value } = await admin.createBotApiKey({ botId: bot.id });
      const webhookUrl = bot.integrations.chat?.webhookUrl;
      assert.ok(webhookUrl);
      const runtime = t.client({ token: value, botId: bot.id, workspaceId: undefined });
      return { workspaceId: workspace.id, botId: bot.id, webhookUrl, runtime };
    }

    const pendingOf = async (runtime: Client) =>
      (await runtime.list.events({ status: 'pending' }).collect()).length;

    test(`messages past ${BACKLOG} waiting are refused with 429 and Retry-After; none acknowledged is lost; taken again once it goes down`, async () => {
      const full = await botOfNewWorkspace('full');
      const other = await botOfNewWorkspace('other');
      const user = await chat.Client.connect({ apiUrl: full.webhookUrl });
      const { conversation } = await user.createConversation({});
      const send = (text: string) =>
        rawChat(full.webhookUrl, 'POST', '/messages', {
          key: user.user.key,
          body: { conversationId: conversation.id, payload: { type: 'text', text } },
        });

      const acknowledged: string[] = [];
      let refused: Awaited<ReturnType<typeof send>> | undefined;
      for (let i = 0; i < BACKLOG * 2 && !refused; i++) {
        const res = await send(`m${i}`);
        if (res.status === 201) acknowledged.push((res.body as { message: { id: string } }).message.id);
        else refused = res;
      }
      assert.ok(refused, `refused once ${BACKLOG} events wait`);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), String(BACKLOG_RETRY_AFTER_SECONDS));
      const body = refused.body as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['code', 'id', 'message', 'type']);
      assert.equal(body.type, 'RateLimited');
      assert.equal(body.code, 429);
      assert.equal(await pendingOf(full.runtime), BACKLOG, 'exactly the backlog waits');

      // Nothing acknowledged was lost: every message is stored, each with its event.
      const { messages } = await user.listMessages({ conversationId: conversation.id });
      assert.deepEqual(messages.map((m) => m.id).sort(), [...acknowledged].sort());
      for (const id of acknowledged) {
        const { events } = await full.runtime.listEvents({ messageId: id });
        assert.equal(events.length, 1, `the event of message ${id}`);
      }

      // The bot's own API calls that would queue more are refused too, as the official client sees it.
      await assert.rejects(full.runtime.createEvent({ type: 'custom', payload: {} }), (err: unknown) => {
        assert.ok(isApiError(err), String(err));
        assert.equal(err.code, 429);
        assert.equal(err.type, 'RateLimited');
        return true;
      });

      // Another workspace's bot is not refused.
      const elsewhere = await chat.Client.connect({ apiUrl: other.webhookUrl });
      const { conversation: there } = await elsewhere.createConversation({});
      await elsewhere.createMessage({ conversationId: there.id, payload: { type: 'text', text: 'hello' } });

      // The bot gets code: its backlog is worked off, and its messages are taken again.
      await deployWithCli(
        { url: t.url, token: t.token, workspaceId: full.workspaceId },
        'examples/echo-bot',
        ['--bot-id', full.botId],
      );
      await waitFor(
        'the backlog to be worked off',
        async () => (await pendingOf(full.runtime)) === 0,
        60_000,
      );
      await waitFor('a message to be taken again', async () => (await send('again')).status === 201, 10_000);
    });
  });
}
