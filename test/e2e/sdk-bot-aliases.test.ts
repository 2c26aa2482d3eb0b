// A bot of today's SDK (7.2.4, built as `bp build` does) deployed as the current CLI deploys it (the
// replay of test/replays/cli7-deploy-bot.ts: one integration under two aliases, a plugin wired to
// one): the integration's `createEvent({ type: 'event' })` reaches the bot as `<alias>:event`, so its
// typed `bot.on.event('webhook:event')` handler fires; `callAction('<alias>:<action>')` runs that
// installation; a conversation an installation makes names its alias, and the bot's reply goes out
// through that installation's channel. Official clients, both stores.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { waitForLog } from '../helpers/deployed-bots.ts';
import { waitFor } from '../helpers/runtime.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { sdkBundle } from '../helpers/sdk-versions.ts';
import type { SdkRelease } from '../helpers/sdk-versions.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';
import { startReceiver } from '../helpers/webhooks.ts';
import type { WebhookReceiver } from '../helpers/webhooks.ts';
import { CLI7_HEADERS, cli7PutBot, cli7UpdateBotBody } from '../replays/cli7-deploy-bot.ts';

const SDK_VERSION = '7.2.4' satisfies SdkRelease;

/**
 * An integration's bundle (hand-written: the handler `bp build` would make), which tells who it is by
 * the alias the host hands it and the configuration of its installation: a webhook request `{kind:
 * 'event'}` creates an event of type `event`; `{kind: 'message', text}` a message of a user in a
 * conversation of its `http` channel; the bot's messages there are posted to the configured `url`;
 * its `shout` action answers upper-cased, with its alias and label.
 */
const INTEGRATION = `
const configuration = (req) => JSON.parse(Buffer.from(req.headers['x-bp-configuration'], 'base64').toString());
const call = async (req, path, body) => {
  const res = await fetch(process.env.BP_API_URL + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.BP_TOKEN, 'x-bot-id': req.headers['x-bot-id'] },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(path + ': ' + res.status + ' ' + text);
  return JSON.parse(text);
};
module.exports = {
  handler: async (req) => {
    const operation = req.headers['x-bp-operation'];
    const alias = req.headers['x-integration-alias'];
    const body = req.body ? JSON.parse(req.body) : {};
    if (operation === 'webhook_received') {
      const incoming = JSON.parse(body.req.body);
      if (incoming.kind === 'event') {
        const { event } = await call(req, '/v1/chat/events', { type: 'event', payload: { alias, label: configuration(req).label } });
        return { status: 200, body: JSON.stringify({ event }) };
      }
      const { user } = await call(req, '/v1/chat/users/get-or-create', { tags: { handle: 'u1' } });
      const { conversation } = await call(req, '/v1/chat/conversations/get-or-create', { channel: 'http', tags: { thread: 't1' } });
      const { message } = await call(req, '/v1/chat/messages', { conversationId: conversation.id, userId: user.id, type: 'text', payload: { text: incoming.text }, tags: {} });
      return { status: 200, body: JSON.stringify({ message }) };
    }
    if (operation === 'message_created') {
      await fetch(configuration(req).url, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ alias, integration: body.conversation.integration, text: body.payload.text }) });
      return { status: 200 };
    }
    if (operation === 'action_triggered') {
      return { status: 200, body: JSON.stringify({ output: { text: body.input.text.toUpperCase(), alias, label: configuration(req).label } }) };
    }
    return { status: 200 };
  },
};
`;

const DEFINITION = {
  channels: {
    http: {
      messages: { text: { schema: { type: 'object', properties: { text: { type: 'string' } } } } },
      conversation: { tags: { thread: {} } },
      message: { tags: {} },
    },
  },
  events: { event: { schema: { type: 'object' } } },
  actions: {
    shout: {
      input: { schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
      output: { schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    },
  },
  user: { tags: { handle: {} } },
};

/** The SDK 7 bot: typed handlers of each alias's event, and an echo of each message. */
const BOT = `import * as sdk from '@botpress/sdk'

const bot = new sdk.Bot({ actions: {}, plugins: {} })

bot.on.event('webhook:event', async ({ event, logger }) => {
  logger.info('webhook:event fired with ' + JSON.stringify(event.payload))
})
bot.on.event('second:event', async ({ event, logger }) => {
  logger.info('second:event fired with ' + JSON.stringify(event.payload))
})
bot.on.message('*', async ({ message, client, ctx }) => {
  await client.createMessage({
    conversationId: message.conversationId,
    userId: ctx.botId,
    tags: {},
    type: 'text',
    payload: { text: 'You said: ' + (message.payload as { text: string }).text },
  })
})

export default bot
`;

const noSandbox = await sandboxSkip();
const stores = await testStores();
const code = noSandbox ? '' : await sdkBundle(SDK_VERSION, BOT);

for (const store of stores) {
  describe(
    `an SDK ${SDK_VERSION} bot with one integration under two aliases (${store.name})`,
    {
      skip: store.skip ?? noSandbox,
    },
    () => {
      let t: TestServer;
      let receiver: WebhookReceiver;
      let botId: string;
      let webhooks: { webhook: string; second: string };

      before(async () => {
        t = await startTestServer(store, { sdkBotTimeoutSeconds: '10', sdkBotPrivateTargets: '127.0.0.1' });
        receiver = await startReceiver();
        const admin = t.client();
        const { integration } = await admin.createIntegration({
          name: 'webhook',
          version: '0.1.0',
          code: INTEGRATION,
          ...DEFINITION,
        });
        botId = (await admin.createBot({ name: 'aliases' })).bot.id;

        // bp deploy (CLI 7): getBot, then updateBot, both with x-multiple-integrations.
        const cli = t.client({ headers: CLI7_HEADERS });
        const remote = (await cli.getBot({ id: botId })).bot;
        const body = cli7UpdateBotBody({
          botId,
          code,
          integrationId: integration.id,
          integrationName: integration.name,
          before: { integrations: Object.keys(remote.integrations), plugins: Object.keys(remote.plugins) },
        });
        const webhookConfig = (label: string) => ({ label, url: receiver.url });
        const integrations = body.integrations as Record<string, { configuration: object } | null>;
        // The receiver's URL is this run's: the definition's configuration names it.
        if (integrations.webhook) integrations.webhook.configuration = webhookConfig('first');
        if (integrations.second) integrations.second.configuration = webhookConfig('second');
        const res = await cli7PutBot(t, botId, body);
        const answered = (await res.json()) as {
          bot: {
            integrations: Record<string, { webhookUrl: string; id: string }>;
            plugins: Record<string, unknown>;
          };
        };
        assert.equal(res.status, 200, JSON.stringify(answered));
        const { webhook, second } = answered.bot.integrations;
        assert.ok(webhook && second, `both aliases installed: ${JSON.stringify(answered.bot.integrations)}`);
        assert.equal(webhook.id, integration.id);
        assert.equal(second.id, integration.id);
        assert.ok(
          answered.bot.integrations.chat,
          'the built-in chat channel stays (the CLI sent null for it)',
        );
        assert.ok(answered.bot.plugins.audit, 'the plugin, by alias');
        webhooks = { webhook: webhook.webhookUrl, second: second.webhookUrl };
      });
      after(async () => {
        await receiver?.close();
        await t?.close();
      });

      const post = async (url: string, body: unknown) => {
        const res = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
        const text = await res.text();
        assert.equal(res.status, 200, text);
        return JSON.parse(text) as Record<string, { type: string; conversationId: string }>;
      };

      test(
        'an installation’s event reaches the bot as <alias>:event and its typed handler fires',
        { timeout: 120_000 },
        async () => {
          const since = new Date(Date.now() - 1000).toISOString();
          // Each alias's event, and the handler of that alias that fired with it.
          for (const [alias, label] of [
            ['second', 'second'],
            ['webhook', 'first'],
          ] as const) {
            const { event } = await post(webhooks[alias], { kind: 'event' });
            assert.equal(event?.type, `${alias}:event`);
            const fired = new RegExp(`${alias}:event fired with \\{"alias":"${alias}","label":"${label}"\\}`);
            await waitForLog(t, botId, since, fired, undefined, 60_000);
          }
        },
      );

      test('callAction(<alias>:<action>) runs that installation', { timeout: 120_000 }, async () => {
        const { value } = await t.client().createBotApiKey({ botId });
        const runtime = t.client({ token: value, botId, workspaceId: undefined });
        const one = await runtime.callAction({ type: 'webhook:shout', input: { text: 'hi' } });
        assert.deepEqual(one.output, { text: 'HI', alias: 'webhook', label: 'first' });
        const two = await runtime.callAction({ type: 'second:shout', input: { text: 'ho' } });
        assert.deepEqual(two.output, { text: 'HO', alias: 'second', label: 'second' });
      });

      test(
        'a conversation an installation makes names its alias; the bot’s reply goes out through it',
        { timeout: 120_000 },
        async () => {
          const { message } = await post(webhooks.second, { kind: 'message', text: 'hello' });
          const { value } = await t.client().createBotApiKey({ botId });
          const runtime = t.client({ token: value, botId, workspaceId: undefined });
          const { conversation } = await runtime.getConversation({ id: message?.conversationId ?? '' });
          assert.equal(conversation.integration, 'second');
          const sent = await waitFor(
            'the reply to go out through the second installation',
            async () =>
              receiver.received
                .map((r) => JSON.parse(r.body) as { alias: string; integration: string; text: string })
                .find((p) => p.text === 'You said: hello'),
            60_000,
            250,
          );
          assert.deepEqual(sent, { alias: 'second', integration: 'second', text: 'You said: hello' });
        },
      );
    },
  );
}
