// An SDK 7.2.4 bot with a real plugin, end to end (issue 34): the plugin, written with
// `PluginDefinition` and `Plugin`, is bundled and deployed as `bp deploy` of a plugin project does
// (`createPlugin` with its definition and code); the bot adds it as `bp add` and `bp build` do (the
// plugin's code from `getPluginCode`, bundled into the bot's under `.botpress/implementation/plugins/`,
// wired to the bot's `hitl` installation for the plugin's `hitl` interface) and is deployed with CLI 7's
// `updateBot` (test/replays/cli7-deploy-plugin.ts). Talked to through `@botpress/chat`: the plugin's
// `beforeIncomingMessage` hook stops a message before any handler; its message handler answers with
// its configuration, counts visits in its own conversation state (`greeter#visits`), tags the
// conversation (`greeter#greeted`), calls an action of its interface (`hitl:createUser`) and emits its
// own event (`greeter#greeted`), whose handler answers too; the state, the tag and the event are read
// back through `@botpress/client`. Both stores.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chatUrlOf } from '../helpers/bp-cli.ts';
import { ChatSession } from '../helpers/chat-bots.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { sdkBundle } from '../helpers/sdk-versions.ts';
import type { SdkRelease } from '../helpers/sdk-versions.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';
import { CLI7_HEADERS, cli7PutBot } from '../replays/cli7-deploy-bot.ts';
import {
  PLUGIN,
  cli7CreatePluginBody,
  cli7UpdatePluginBotBody,
  pluginInstanceConfig,
} from '../replays/cli7-deploy-plugin.ts';
import type { Cli7PluginBot } from '../replays/cli7-deploy-plugin.ts';

const SDK_VERSION = '7.2.4' satisfies SdkRelease;

/**
 * The plugin's `src/index.ts`. `bp build` generates `.botpress` with a typed `Plugin` class; the untyped
 * SDK class is the same at run time.
 */
const PLUGIN_SOURCE = `import * as sdk from '@botpress/sdk'

type Configuration = { greeting: string }

const plugin = new sdk.Plugin({ actions: {} })

// A hook before every handler: a whisper stops there, answered by no one and counted nowhere.
plugin.on.beforeIncomingMessage('*', async ({ data }) => {
  if ((data.payload as { text?: string }).text === 'psst') return { stop: true }
  return undefined
})

plugin.on.message('*', async ({ message, client, ctx, conversation, states, events, actions, configuration }) => {
  const { greeting } = configuration as Configuration
  const visits = states.conversation.visits
  const { count } = await visits.getOrSet(conversation.id, { count: 0 })
  await visits.set(conversation.id, { count: count + 1 })
  await conversation.update({ tags: { greeted: 'yes' } })
  const { userId } = await actions.hitl.createUser({ name: 'visitor of ' + conversation.id })
  await client.createMessage({
    conversationId: message.conversationId,
    userId: ctx.botId,
    tags: {},
    type: 'text',
    payload: { text: greeting + ' (visit ' + (count + 1) + ', hitl user ' + (userId ? 'made' : 'missing') + ')' },
  })
  await events.greeted.withConversationId(conversation.id).emit({ count: count + 1 })
})

plugin.on.event('greeted', async ({ event, client, ctx }) => {
  await client.createMessage({
    conversationId: event.conversationId!,
    userId: ctx.botId,
    tags: {},
    type: 'text',
    payload: { text: 'greeted event: ' + (event.payload as { count: number }).count },
  })
})

export default plugin
`;

/** The bot's `src/index.ts`: its own message handler runs after the plugin's. */
const BOT_SOURCE = `import * as bp from './.botpress'

const bot = new bp.Bot({ actions: {} })

bot.on.message('*', async ({ message, client, ctx }) => {
  await client.createMessage({
    conversationId: message.conversationId,
    userId: ctx.botId,
    tags: {},
    type: 'text',
    payload: { text: 'bot heard: ' + (message.payload as { text: string }).text },
  })
})

export default bot
`;

/**
 * What `bp build` generates of the bot's `.botpress` for its plugins (the files that reach the bundle;
 * the typings are left out): the plugin's code as `bp add` fetched it, its instance's configuration,
 * and the `Bot` class that hands the SDK the plugins by alias.
 */
function generatedBotFiles(implementation: string, config: object): Record<string, string> {
  return {
    '.botpress/index.ts': `import * as sdk from '@botpress/sdk'
import * as plugins from './implementation/plugins'

export class Bot extends sdk.Bot<any, any> {
  public constructor(props: Omit<sdk.BotProps<any, any>, 'plugins'>) {
    super({ ...props, plugins: plugins.plugins })
  }
}
`,
    '.botpress/implementation/plugins/index.ts': `import * as greeter from './greeter'

export const plugins = {
  "greeter": greeter.default,
}
`,
    '.botpress/implementation/plugins/greeter/index.ts': `import bundle from './bundle'
import * as config from './config'

export const configuration = config.default.configuration
export const interfaces = config.default.interfaces

export default bundle.initialize(config.default)
`,
    '.botpress/implementation/plugins/greeter/config.ts': `export default ${JSON.stringify(config, null, 2)}`,
    '.botpress/implementation/plugins/greeter/bundle.js': implementation,
  };
}

const noSandbox = await sandboxSkip();
const stores = await testStores();
const pluginCode = noSandbox ? '' : await sdkBundle(SDK_VERSION, PLUGIN_SOURCE);
/** The browser bundle (ESM) is stored and served, never run here: a stand-in keeps the test short. */
const pluginBrowserCode = 'export default {}';

for (const store of stores) {
  describe(
    `an SDK ${SDK_VERSION} bot with a plugin (${store.name})`,
    { skip: store.skip ?? noSandbox },
    () => {
      let t: TestServer;
      let botId: string;
      let session: ChatSession;
      /** A message the user sent: its conversation is the one the bot's code sees (the Runtime API's). */
      let sentId: string;

      before(async () => {
        t = await startTestServer(store, { sdkBotTimeoutSeconds: '20' });
        const cli = t.client({ headers: CLI7_HEADERS });

        // The plugin project: bp add hitl (the hub's built-in interface), then bp deploy.
        const hitlInterface = (await cli.getPublicInterface({ name: 'hitl', version: 'latest' })).interface;
        const created = (
          await cli.createPlugin(
            cli7CreatePluginBody({ node: pluginCode, browser: pluginBrowserCode }, hitlInterface),
          )
        ).plugin;

        // bp add greeter, bp add hitl, bp add chat: the hub's answers.
        const plugin = (await cli.getPluginByName({ name: PLUGIN.name, version: PLUGIN.version })).plugin;
        assert.equal(plugin.id, created.id);
        const { code: implementation } = await cli.getPluginCode({ id: plugin.id, platform: 'node' });
        const hitl = (await cli.getIntegrationByName({ name: 'hitl', version: 'latest' })).integration;
        const hitlImplementation = hitl.interfaces.hitl;
        assert.ok(
          hitlImplementation,
          `the built-in hitl integration implements hitl: ${JSON.stringify(hitl.interfaces)}`,
        );
        const chat = (await cli.getIntegrationByName({ name: 'chat', version: 'latest' })).integration;

        // bp build of the bot, then bp deploy: getBot, then updateBot.
        botId = (await t.client().createBot({ name: 'with a plugin' })).bot.id;
        const wiring: Pick<Cli7PluginBot, 'hitl'> = {
          hitl: { id: hitl.id, name: hitl.name, version: hitl.version, interface: hitlImplementation },
        };
        const code = await sdkBundle(
          SDK_VERSION,
          BOT_SOURCE,
          generatedBotFiles(implementation, pluginInstanceConfig(wiring)),
        );
        const remote = (await cli.getBot({ id: botId })).bot;
        const body = cli7UpdatePluginBotBody({
          ...wiring,
          botId,
          code,
          plugin,
          implementation,
          chatId: chat.id,
          before: { integrations: Object.keys(remote.integrations), plugins: Object.keys(remote.plugins) },
        });
        const res = await cli7PutBot(t, botId, body);
        const answered = await res.text();
        assert.equal(res.status, 200, answered);
        const deployed = (await cli.getBot({ id: botId })).bot;
        assert.equal(deployed.plugins.greeter?.id, plugin.id);
        assert.deepEqual(deployed.plugins.greeter?.interfaces?.hitl, {
          integrationId: hitl.id,
          integrationAlias: 'hitl',
          integrationInterfaceAlias: 'hitl',
        });
        session = await ChatSession.open(await chatUrlOf(t, botId));
      });
      after(async () => {
        await session?.close();
        await t?.close();
      });

      test(
        'the plugin’s hook stops a whisper; its handler answers with its configuration, then the bot’s, then its own event',
        { timeout: 120_000 },
        async () => {
          await session.say('psst');
          sentId = await session.say('hi');
          assert.deepEqual(await session.nextTexts(3, 60_000), [
            'Hello from the plugin (visit 1, hitl user made)',
            'bot heard: hi',
            'greeted event: 1',
          ]);
          await session.say('again');
          assert.deepEqual(await session.nextTexts(3, 60_000), [
            'Hello from the plugin (visit 2, hitl user made)',
            'bot heard: again',
            'greeted event: 2',
          ]);
        },
      );

      test('the plugin’s state, tag and event are the bot’s, under the plugin’s alias', async () => {
        const { value } = await t.client().createBotApiKey({ botId });
        const runtime = t.client({ token: value, botId, workspaceId: undefined });
        const { conversationId } = (await runtime.getMessage({ id: sentId })).message;
        const { state } = await runtime.getState({
          type: 'conversation',
          id: conversationId,
          name: 'greeter#visits',
        });
        assert.deepEqual(state.payload, { count: 2 });
        const { conversation } = await runtime.getConversation({ id: conversationId });
        assert.equal(conversation.tags['greeter#greeted'], 'yes');
        const { events } = await runtime.listEvents({ type: 'greeter#greeted', conversationId });
        assert.deepEqual(
          events.map((e) => e.payload).sort((a, b) => Number(a.count) - Number(b.count)),
          [{ count: 1 }, { count: 2 }],
        );
      });
    },
  );
}
