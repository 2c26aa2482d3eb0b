// Integrations as SDK bundles (hand-written here, registered with createIntegration as `bp deploy` does)
// installed on a bot: a webhook request reaches the integration's handler and its answer the sender, the
// messages it creates reach the bot, the bot's replies go out through its channel (durably, again after a
// failure), its actions answer callAction; and one that misbehaves harms nothing else.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isApiError } from '@botpress/client';
import type { Client } from '@botpress/client';
import { waitForLog } from '../helpers/deployed-bots.ts';
import { rejects4xx, waitFor } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { startReceiver } from '../helpers/webhooks.ts';

/** The integrations post to the test's receivers, on this host's loopback: the operator lets them. */
const RECEIVERS = '127.0.0.1';
import type { WebhookReceiver } from '../helpers/webhooks.ts';

/**
 * A generic HTTP channel, as an integration bundle: a POST `{user, conversation, text}` to its webhook
 * becomes a message of that user in that conversation; the bot's text messages are POSTed to the
 * configured `url` (`failures` first answers are refused with a 500, to be tried again); its action
 * `shout` upper-cases; `extra` runs first in the webhook handler (to misbehave).
 */
function httpChannel(extra = ''): string {
  return `
let failures = 0;
const call = async (req, method, path, body) => {
  const res = await fetch(process.env.BP_API_URL + path, {
    method,
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer ' + process.env.BP_TOKEN,
      'x-bot-id': req.headers['x-bot-id'],
      'x-integration-id': req.headers['x-integration-id'],
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(method + ' ' + path + ': ' + res.status + ' ' + text);
  return JSON.parse(text);
};
const configuration = (req) => JSON.parse(Buffer.from(req.headers['x-bp-configuration'], 'base64').toString());
module.exports = {
  handler: async (req) => {
    const operation = req.headers['x-bp-operation'];
    const body = req.body ? JSON.parse(req.body) : {};
    if (operation === 'register') {
      if (configuration(req).refuse) return { status: 400, body: JSON.stringify({ message: 'refused: ' + body.webhookUrl }) };
      return { status: 200 };
    }
    if (operation === 'webhook_received') {
      ${extra}
      const incoming = JSON.parse(body.req.body);
      const { user } = await call(req, 'POST', '/v1/chat/users/get-or-create', { tags: { handle: incoming.user } });
      const { conversation } = await call(req, 'POST', '/v1/chat/conversations/get-or-create', {
        channel: 'http', tags: { thread: incoming.conversation },
      });
      const { message } = await call(req, 'POST', '/v1/chat/messages', {
        conversationId: conversation.id, userId: user.id, type: 'text', payload: { text: incoming.text }, tags: {},
      });
      return { status: 201, headers: { 'x-handled-by': 'http-channel', 'content-type': 'application/json' },
        body: JSON.stringify({ messageId: message.id, path: body.req.path, query: body.req.query }) };
    }
    if (operation === 'message_created') {
      const { url, failFirst } = configuration(req);
      if (failures < (failFirst || 0)) { failures++; return { status: 500, body: JSON.stringify({ error: 'not yet' }) }; }
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ thread: body.conversation.tags.thread, channel: body.conversation.channel,
          integration: body.conversation.integration, from: body.user.id, text: body.payload.text }) });
      return { status: res.ok ? 200 : 502 };
    }
    if (operation === 'create_conversation') {
      await call(req, 'POST', '/v1/chat/conversations/get-or-create', { channel: body.channel, tags: body.tags });
      return { status: 200 };
    }
    if (operation === 'create_user') {
      await call(req, 'POST', '/v1/chat/users/get-or-create', { tags: body.tags, name: 'known to ' + body.tags.handle });
      return { status: 200 };
    }
    if (operation === 'action_triggered') {
      return { status: 200, body: JSON.stringify({ output: { text: body.input.text.toUpperCase() } }) };
    }
    return { status: 200 };
  },
};
`;
}

/** An SDK bot (hand-written bundle) that answers each message `You said: <text>` in its conversation. */
const ECHO_BOT = `
module.exports = {
  handler: async (req) => {
    if (req.headers['x-bp-operation'] !== 'event_received') return { status: 200 };
    const event = JSON.parse(req.body).event;
    if (event.type !== 'message_created') return { status: 200 };
    const res = await fetch(process.env.BP_API_URL + '/v1/chat/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.BP_TOKEN, 'x-bot-id': req.headers['x-bot-id'] },
      body: JSON.stringify({ conversationId: event.conversationId, userId: req.headers['x-bot-id'], type: 'text',
        payload: { text: 'You said: ' + event.payload.message.payload.text }, tags: {} }),
    });
    if (!res.ok) throw new Error('reply failed: ' + res.status);
    return { status: 200 };
  },
};
`;

const DEFINITION = {
  channels: {
    http: {
      messages: { text: { schema: { type: 'object', properties: { text: { type: 'string' } } } } },
      conversation: { tags: { thread: {} }, creation: { enabled: true, requiredTags: ['thread'] } },
      message: { tags: {} },
    },
  },
  actions: {
    shout: {
      input: {
        schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
      output: {
        schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    },
  },
  user: { tags: { handle: {} }, creation: { enabled: true, requiredTags: ['handle'] } },
};

interface Posted {
  thread: string;
  channel: string;
  integration: string;
  from: string;
  text: string;
}

const postedOf = (receiver: WebhookReceiver): Posted[] =>
  receiver.received.map((r) => JSON.parse(r.body) as Posted);

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** A bot that echoes, with the HTTP channel (deployed as `name`) installed with `configuration`. */
async function installHttpChannel(
  t: TestServer,
  name: string,
  configuration: Record<string, unknown>,
  extra = '',
): Promise<{ botId: string; integrationId: string; webhookUrl: string }> {
  const client = t.client();
  const { integration } = await client.createIntegration({
    name,
    version: '0.1.0',
    code: httpChannel(extra),
    ...DEFINITION,
  });
  const { bot } = await client.createBot({ name: `${name}-bot`, code: ECHO_BOT });
  await client.updateBot({
    id: bot.id,
    integrations: { [integration.id]: { enabled: true, configuration } },
  });
  const installed = (await client.getBot({ id: bot.id })).bot.integrations[integration.id];
  assert.ok(installed, 'getBot shows the installation, keyed by the integration id');
  return { botId: bot.id, integrationId: integration.id, webhookUrl: installed.webhookUrl };
}

const noSandbox = await sandboxSkip();
for (const store of await testStores()) {
  describe(
    `integrations installed on a bot run their bundles (${store.name})`,
    { skip: store.skip ?? noSandbox },
    () => {
      let t: TestServer;
      let receiver: WebhookReceiver;

      before(async () => {
        t = await startTestServer(store, { sdkBotTimeoutSeconds: '3', sdkBotPrivateTargets: RECEIVERS });
        receiver = await startReceiver();
      });
      after(async () => {
        await receiver?.close();
        await t?.close();
      });

      const setUp = (name: string, configuration: Record<string, unknown>) =>
        installHttpChannel(t, name, configuration);

      test('a webhook request reaches the handler, its message the bot, and the reply goes out through the channel', async () => {
        const { botId, integrationId, webhookUrl } = await setUp('http-channel', { url: receiver.url });
        const client = t.client();
        const installed = (await client.getBot({ id: botId })).bot.integrations[integrationId];
        assert.equal(installed?.name, 'http-channel');
        assert.equal(installed?.version, '0.1.0');
        assert.equal(installed?.enabled, true);
        assert.deepEqual(installed?.configuration, { url: receiver.url });
        assert.match(webhookUrl, /\/webhooks\/[0-9a-f-]{36}$/);
        await waitFor(
          'the installation registered',
          async () =>
            (await client.getBot({ id: botId })).bot.integrations[integrationId]?.status === 'registered',
          20_000,
        );

        const answer = await post(`${webhookUrl}/inbox?source=test`, {
          user: 'ann',
          conversation: 'c1',
          text: 'hello',
        });
        assert.equal(answer.status, 201, await answer.clone().text());
        assert.equal(answer.headers.get('x-handled-by'), 'http-channel');
        const handled = (await answer.json()) as { messageId: string; path: string; query: string };
        assert.equal(handled.path, '/inbox');
        assert.equal(handled.query, 'source=test');

        const posted = await waitFor(
          'the bot reply posted by the channel',
          async () => postedOf(receiver).find((p) => p.thread === 'c1'),
          30_000,
        );
        assert.deepEqual(posted, {
          thread: 'c1',
          channel: 'http',
          integration: 'http-channel',
          from: botId,
          text: 'You said: hello',
        });
        const runtime = t.client({ botId });
        const { message } = await runtime.getMessage({ id: handled.messageId });
        const { conversation } = await runtime.getConversation({ id: message.conversationId });
        assert.equal(conversation.integration, 'http-channel');
        assert.equal(conversation.channel, 'http');
      });

      test('callAction of `<integration>:<action>` runs the integration’s action, with its input checked', async () => {
        const { botId } = await setUp('shouter', { url: receiver.url });
        const runtime = t.client({ botId });
        const { output } = await runtime.callAction({ type: 'shouter:shout', input: { text: 'quiet' } });
        assert.deepEqual(output, { text: 'QUIET' });
        const refused = await rejects4xx(runtime.callAction({ type: 'shouter:shout', input: {} }));
        assert.equal(refused.type, 'InvalidPayload');
        const missing = await rejects4xx(runtime.callAction({ type: 'shouter:whisper', input: {} }));
        assert.equal(missing.code, 404);
      });

      test('a bot creates conversations and users of the integration through it (create_conversation, create_user)', async () => {
        const { botId } = await setUp('opener', { url: receiver.url });
        const runtime = t.client({ botId });
        const { conversation } = await runtime.createConversation({
          channel: 'http',
          tags: { thread: 't9' },
          integrationName: 'opener',
        });
        assert.equal(conversation.integration, 'opener');
        assert.equal(conversation.tags.thread, 't9');
        const again = await runtime.getOrCreateConversation({
          channel: 'http',
          tags: { thread: 't9' },
          integrationName: 'opener',
        });
        assert.equal(again.conversation.id, conversation.id);
        assert.equal(again.meta.created, false);
        const untagged = await rejects4xx(
          runtime.createConversation({ channel: 'http', tags: {}, integrationName: 'opener' }),
        );
        assert.equal(untagged.type, 'InvalidPayload');
        const { user } = await runtime.createUser({ tags: { handle: 'zed' }, integrationName: 'opener' });
        assert.equal(user.name, 'known to zed', 'the integration made the user');
        // A bot's message there goes out through the channel, as in a conversation a user began.
        await runtime.createMessage({
          conversationId: conversation.id,
          userId: botId,
          type: 'text',
          payload: { text: 'we begin' },
          tags: {},
        });
        const posted = await waitFor(
          'the first message of the conversation the bot opened',
          async () => postedOf(receiver).find((p) => p.thread === 't9'),
          30_000,
        );
        assert.equal(posted.text, 'we begin');
      });

      test('a reply the channel refuses with a 500 is handed over again until it takes it', async () => {
        const { webhookUrl } = await setUp('flaky-channel', { url: receiver.url, failFirst: 1 });
        const answer = await post(webhookUrl, { user: 'bo', conversation: 'c-flaky', text: 'again' });
        assert.equal(answer.status, 201, await answer.text());
        const posted = await waitFor(
          'the reply after a retry',
          async () => postedOf(receiver).find((p) => p.thread === 'c-flaky'),
          40_000,
        );
        assert.equal(posted.text, 'You said: again');
      });
    },
  );
}

const sqlite = (await testStores())[0] ?? { name: 'sqlite' };
describe(
  'integrations that misbehave, or are asked for what they are not, harm nothing else',
  { skip: noSandbox },
  () => {
    let t: TestServer;
    let receiver: WebhookReceiver;
    let client: Client;

    before(async () => {
      t = await startTestServer(sqlite, { sdkBotTimeoutSeconds: '2', sdkBotPrivateTargets: RECEIVERS });
      receiver = await startReceiver();
      client = t.client();
    });
    after(async () => {
      await receiver?.close();
      await t?.close();
    });

    const install = (name: string, configuration: Record<string, unknown>, extra = '') =>
      installHttpChannel(t, name, configuration, extra);

    test('a register that fails shows on the installation and in the bot’s logs; the webhook still works', async () => {
      const since = new Date().toISOString();
      const { botId, integrationId, webhookUrl } = await install('refusing', {
        url: receiver.url,
        refuse: true,
      });
      await waitForLog(t, botId, since, /\[refusing\] register failed: .*refused: http/, 'error', 20_000);
      const installed = (await client.getBot({ id: botId })).bot.integrations[integrationId];
      assert.equal(installed?.status, 'registration_failed');
      assert.match(installed?.statusReason ?? '', /refused/);
      const answer = await post(webhookUrl, { user: 'x', conversation: 'c-ref', text: 'hi' });
      assert.equal(answer.status, 201);
    });

    test('a handler that hangs answers 504 to its sender within the time limit; one that exits a 500; then it works again', async () => {
      const { webhookUrl } = await install(
        'moody',
        { url: receiver.url },
        `const mood = JSON.parse(body.req.body).text;
       if (mood === 'hang') await new Promise(() => {});
       if (mood === 'die') process.exit(3);`,
      );
      const started = Date.now();
      const hung = await post(webhookUrl, { user: 'u', conversation: 'c-m', text: 'hang' });
      assert.equal(hung.status, 504);
      assert.ok(Date.now() - started < 10_000);
      assert.equal(((await hung.json()) as { type: string }).type, 'OperationTimeout');
      // The process was stopped: the next request starts it again (after a short backoff).
      const fine = await waitFor(
        'the integration answering again',
        async () => {
          const res = await post(webhookUrl, { user: 'u', conversation: 'c-m', text: 'fine' });
          return res.status === 201 ? res : undefined;
        },
        20_000,
        500,
      );
      assert.equal(fine.status, 201);
      const died = await post(webhookUrl, { user: 'u', conversation: 'c-m', text: 'die' });
      assert.equal(died.status, 500);
      assert.equal(((await died.json()) as { type: string }).type, 'Internal');
    });

    test('an integration the workspace has not deployed is refused by updateBot, naming it, and nothing is applied', async () => {
      const { bot } = await client.createBot({ name: 'no-such-integration' });
      const error = await client
        .updateBot({
          id: bot.id,
          name: 'renamed',
          integrations: { intver_missing: { enabled: true, configuration: {} } },
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      assert.ok(isApiError(error), String(error));
      assert.equal(error.code, 400);
      assert.match(error.message, /integrations\.intver_missing/);
      assert.equal((await client.getBot({ id: bot.id })).bot.name, 'no-such-integration');
    });

    test('an integration’s key acts as that integration for its bot only; a header cannot make it another', async () => {
      const other = await client.createBot({ name: 'bystander' });
      const { webhookUrl } = await install(
        'prober',
        { url: receiver.url },
        `const probe = JSON.parse(body.req.body).text;
       if (probe === 'probe') {
         const other = await fetch(process.env.BP_API_URL + '/v1/chat/users?pageSize=1', {
           headers: { authorization: 'Bearer ' + process.env.BP_TOKEN, 'x-bot-id': ${JSON.stringify(other.bot.id)} } });
         const conv = await fetch(process.env.BP_API_URL + '/v1/chat/conversations', {
           method: 'POST',
           headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.BP_TOKEN,
             'x-bot-id': req.headers['x-bot-id'], 'x-integration-alias': 'chat' },
           body: JSON.stringify({ channel: 'http', tags: {} }) });
         const made = await conv.json();
         return { status: 200, body: JSON.stringify({ other: other.status, integration: made.conversation.integration }) };
       }`,
      );
      const answer = await post(webhookUrl, { user: 'p', conversation: 'c-p', text: 'probe' });
      assert.deepEqual(await answer.json(), { other: 403, integration: 'prober' });
    });

    test('an unknown integration id in a webhook URL is a 404; a deleted installation’s webhook too', async () => {
      const { botId, integrationId, webhookUrl } = await install('leaving', { url: receiver.url });
      const unknown = await post(
        webhookUrl.replace(/[0-9a-f-]{36}$/, '00000000-0000-4000-8000-000000000000'),
        {},
      );
      assert.equal(unknown.status, 404);
      await client.updateBot({ id: botId, integrations: { [integrationId]: null } });
      assert.equal((await client.getBot({ id: botId })).bot.integrations[integrationId], undefined);
      const gone = await post(webhookUrl, { user: 'l', conversation: 'c-l', text: 'hi' });
      assert.equal(gone.status, 404);
      // Uninstalled, it may be deleted.
      await client.deleteIntegration({ id: integrationId });
    });
  },
);
