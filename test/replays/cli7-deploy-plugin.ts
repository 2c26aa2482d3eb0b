/**
 * What the current CLI (7.x) sends to deploy a plugin project, and a bot project that adds that plugin,
 * replayed request by request. The registry serves only CLI 0.8, so this follows the source,
 * botpress/botpress at commit 4f4a05a0c427ce1fac9d7859a89bb995106051ac (packages/cli 7.1.2,
 * packages/sdk 7.2.2):
 *
 * - packages/cli/src/command-implementations/bundle-command.ts: a plugin is bundled as a bot is
 *   (`import x from './index'; export default x; export const handler = x.handler;`), to CommonJS for
 *   node and to ESM for the browser.
 * - packages/cli/src/command-implementations/deploy-command.ts (`_deployPlugin`),
 *   packages/cli/src/api/plugin-body.ts (`prepareCreatePluginBody`) and project-command.ts
 *   (`preparePluginDependencies`): `createPlugin` of the definition (its `user`, `conversation` and
 *   `message` tags, `configuration`, `events`, `actions` and `states` with their schemas as JSON
 *   Schema), its `dependencies` (`interfaces` and `integrations` by alias: each the package `bp add`
 *   wrote, with the `id` the hub gave it) and `code: { node, browser }`.
 * - packages/cli/src/command-implementations/add-command.ts (`_findRemotePackage`): `bp add` of a
 *   deployed plugin reads its definition and `getPluginCode({ id, platform: 'node' })`, written to
 *   `bp_modules/` as the package's `implementation`.
 * - packages/cli/src/code-generation/bot-implementation/bot-plugins/plugin-module.ts: `bp build` of the
 *   bot writes each plugin under `.botpress/implementation/plugins/<alias>/`: `bundle.js` (the
 *   implementation as it is), `config.ts` (`{ alias, interfaces, integrations, configuration }` of the
 *   plugin instance) and an index that exports `bundle.initialize(config)`; `.../plugins/index.ts`
 *   maps each alias to it and the generated `Bot` class passes that map as the SDK `Bot`'s `plugins`.
 * - packages/sdk/src/bot/definition.ts (`addPlugin`): the plugin instance is the package with its
 *   `alias`, `configuration` and its `interfaces` resolved to the integration installed under the alias
 *   the bot names (the integration's declaration of the interface, with the integration's `id`, `name`
 *   and `version`, and the `integrationAlias` and `integrationInterfaceAlias` the bot gave).
 * - packages/cli/src/command-implementations/project-command.ts (`prepareBotDependencies`) and
 *   packages/cli/src/api/bot-body.ts (`prepareUpdateBotBody`): `updateBot` sends each plugin by alias as
 *   the whole instance (the package, its `implementation` a Buffer, which JSON makes
 *   `{ type: 'Buffer', data: [...] }`), its `interfaces` as `{ integrationId, integrationAlias,
 *   integrationInterfaceAlias }`; the bot's own states, events and tags only (the plugin's, which the
 *   definition's `withPlugins` merges, are for the typings, not for the API).
 */
import { cli7UpdateBody } from './cli7-deploy-bot.ts';

/** The plugin's name and version (`plugin.definition.ts`). */
export const PLUGIN = { name: 'greeter', version: '0.1.0' } as const;

/**
 * `createPlugin`'s body for the plugin of `plugin.definition.ts`:
 *
 * ```ts
 * new PluginDefinition({
 *   name: 'greeter', version: '0.1.0',
 *   configuration: { schema: z.object({ greeting: z.string() }) },
 *   states: { visits: { type: 'conversation', schema: z.object({ count: z.number() }) } },
 *   events: { greeted: { schema: z.object({ count: z.number() }) } },
 *   conversation: { tags: { greeted: {} } },
 *   interfaces: { hitl: hitlInterface },  // bp add hitl (the interface)
 * })
 * ```
 */
export function cli7CreatePluginBody(
  code: { node: string; browser: string },
  /** The hitl interface `bp add hitl` found in the hub (its package: `id`, `name`, `version`). */
  hitl: { id: string; name: string; version: string },
) {
  const count = { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] };
  return {
    name: PLUGIN.name,
    version: PLUGIN.version,
    user: { tags: {} },
    conversation: { tags: { greeted: {} } },
    message: { tags: {} },
    configuration: {
      schema: {
        type: 'object',
        properties: { greeting: { type: 'string' } },
        required: ['greeting'],
        additionalProperties: false,
      },
    },
    events: { greeted: { schema: count } },
    actions: {},
    states: { visits: { type: 'conversation' as const, schema: count } },
    dependencies: {
      interfaces: { hitl: { type: 'interface', id: hitl.id, name: hitl.name, version: hitl.version } },
      integrations: {},
    },
    code,
  };
}

/** An integration's declaration of an interface it implements, as `getIntegration` answers it. */
export interface InterfaceImplementation {
  id: string;
  name: string;
  version: string;
  entities: Record<string, { name: string }>;
  actions: Record<string, { name: string }>;
  events: Record<string, { name: string }>;
  channels: Record<string, { name: string }>;
}

export interface Cli7PluginBot {
  botId: string;
  /** The bot's bundle (`bp build`), the plugin's code inside it. */
  code: string;
  /** The plugin as `getPlugin` answers it. */
  plugin: { id: string; name: string; version: string };
  /** The plugin's code `bp add` fetched (its `implementation`). */
  implementation: string;
  /** The installed hitl integration (`bp add hitl`), and its declaration of the hitl interface. */
  hitl: { id: string; name: string; version: string; interface: InterfaceImplementation };
  /** The chat integration's id (`bp add chat`). */
  chatId: string;
  /** What `getBot` answered before the deploy (the keys the CLI sends null for). */
  before: { integrations: string[]; plugins: string[] };
}

/**
 * The plugin instance `bot.definition.ts`'s `.addPlugin(greeter, { alias: 'greeter', configuration:
 * { greeting: 'Hello from the plugin' }, dependencies: { hitl: { integrationAlias: 'hitl',
 * integrationInterfaceAlias: 'hitl' } } })` makes: what `bp build` writes to the plugin's `config.ts`.
 */
export function pluginInstanceConfig(bot: Pick<Cli7PluginBot, 'hitl'>) {
  const { interface: declared, id, name, version } = bot.hitl;
  return {
    alias: 'greeter',
    interfaces: {
      hitl: { ...declared, id, name, version, integrationAlias: 'hitl', integrationInterfaceAlias: 'hitl' },
    },
    integrations: {},
    configuration: { greeting: 'Hello from the plugin' },
  };
}

/** The body of the `updateBot` (`PUT /v1/admin/bots/{id}`) that `bp deploy` of the bot sends after `getBot`. */
export function cli7UpdatePluginBotBody(bot: Cli7PluginBot): Record<string, unknown> {
  const installed = (integrationId: string) => ({
    enabled: true,
    configurationType: undefined,
    configuration: {},
    disabledChannels: undefined,
    integrationId,
  });
  // `.addIntegration(chat, { enabled: true })`, `.addIntegration(hitl, { enabled: true })`
  const integrations = { chat: installed(bot.chatId), hitl: installed(bot.hitl.id) };
  const config = pluginInstanceConfig(bot);
  const plugins = {
    greeter: {
      type: 'plugin',
      id: bot.plugin.id,
      name: bot.plugin.name,
      version: bot.plugin.version,
      definition: { name: bot.plugin.name, version: bot.plugin.version, states: {}, events: {} },
      implementation: Buffer.from(bot.implementation),
      alias: config.alias,
      configuration: config.configuration,
      interfaces: {
        hitl: { integrationId: bot.hitl.id, integrationAlias: 'hitl', integrationInterfaceAlias: 'hitl' },
      },
      integrations: {},
    },
  };
  const { botId, code, before } = bot;
  return cli7UpdateBody({ botId, code, integrations, plugins, before });
}
