/**
 * What `bp deploy` of the current CLI (7.x) sends to deploy a bot whose definition installs one
 * integration under two aliases and a plugin wired to one of them, replayed request by request.
 * The registry serves only CLI 0.8, so this follows the source, botpress/botpress at commit
 * 4f4a05a0c427ce1fac9d7859a89bb995106051ac (packages/cli 7.1.2):
 *
 * - packages/cli/src/api/client.ts (`ApiClient`): every request carries `x-multiple-integrations: true`.
 * - packages/cli/src/command-implementations/deploy-command.ts (`_deployBot`): `getBot` of the bot,
 *   then `updateBot` of `prepareUpdateBotBody(...)` with `id`, `code` and the secrets prompted.
 * - packages/cli/src/command-implementations/project-command.ts (`prepareBotDependencies`): each
 *   integration by alias as `{ enabled, configurationType, configuration, disabledChannels,
 *   integrationId }`; each plugin by alias as the whole plugin instance of the definition, its
 *   `interfaces` as `{ integrationId, integrationAlias, integrationInterfaceAlias }` and its
 *   `integrations` as `{ integrationId, integrationAlias }`.
 * - packages/cli/src/api/bot-body.ts (`prepareUpdateBotBody`): `null` for every key of the bot's
 *   current `integrations`, `plugins`, `states`, `recurringEvents` (and tags, events and actions)
 *   that the definition does not have; `tags` are the definition's attributes (undefined here).
 * - packages/cli/src/utils/integration-utils.ts (`prepareIntegrationsUpdate`): an alias the bot does
 *   not have yet, sent without `enabled`, is sent `enabled: false`.
 * - packages/sdk/src/bot/definition.ts (`addIntegration`, `addPlugin`): an alias defaults to the
 *   package's name; a plugin instance carries its package (`name`, `version`, `definition`...) and `alias`.
 */

import type { TestServer } from '../helpers/server.ts';

/** The headers the CLI's client adds to the official client's own (authorization, x-workspace-id). */
export const CLI7_HEADERS = { 'x-multiple-integrations': 'true' } as const;

/** Sends `body` as CLI 7's `updateBot` (`PUT /v1/admin/bots/{id}`), as the server's owner. */
export function cli7PutBot(
  t: Pick<TestServer, 'url' | 'token' | 'workspaceId'>,
  botId: string,
  body: Record<string, unknown>,
): Promise<Response> {
  return fetch(`${t.url}/v1/admin/bots/${botId}`, {
    method: 'PUT',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${t.token}`,
      'x-workspace-id': t.workspaceId,
      ...CLI7_HEADERS,
    },
    body: JSON.stringify(body),
  });
}

export interface Cli7Deploy {
  botId: string;
  /** The bundle `bp build` made. */
  code: string;
  /** The deployed integration both aliases install. */
  integrationId: string;
  integrationName: string;
  /** What `getBot` answered before the deploy (the keys the CLI sends null for). */
  before: { integrations: string[]; plugins: string[] };
}

/**
 * What `prepareUpdateBotBody` sends for a definition without tags, recurring events, events or states:
 * its integrations and plugins, null for each one `getBot` answered `before` that it no longer has, and
 * its bundle (`bp deploy`) or url (`bp dev`). JSON drops the undefined fields and makes a Buffer
 * `{ type, data }`, as the client's request does.
 */
export function cli7UpdateBody(bot: {
  botId: string;
  code?: string;
  url?: string;
  actions?: Record<string, unknown>;
  integrations: Record<string, unknown>;
  plugins: Record<string, unknown>;
  before: { integrations: string[]; plugins: string[] };
}): Record<string, unknown> {
  const nulls = (keys: string[], kept: Record<string, unknown>) =>
    Object.fromEntries(keys.filter((k) => !(k in kept)).map((k) => [k, null]));
  return JSON.parse(
    JSON.stringify({
      user: { tags: {} },
      conversation: { tags: {} },
      message: { tags: {} },
      recurringEvents: {},
      actions: bot.actions ?? {},
      events: {},
      states: {},
      integrations: { ...bot.integrations, ...nulls(bot.before.integrations, bot.integrations) },
      plugins: { ...bot.plugins, ...nulls(bot.before.plugins, bot.plugins) },
      id: bot.botId,
      code: bot.code,
      url: bot.url,
      secrets: bot.code === undefined ? undefined : {},
    }),
  ) as Record<string, unknown>;
}

/** The body of the `updateBot` (`PUT /v1/admin/bots/{id}`) the CLI sends after `getBot`. */
export function cli7UpdateBotBody(deploy: Cli7Deploy): Record<string, unknown> {
  const integrations = {
    // `.addIntegration(webhook, { alias: 'webhook', enabled: true, configuration: { label: 'first' } })`
    webhook: {
      enabled: true,
      configurationType: undefined,
      configuration: { label: 'first' },
      disabledChannels: undefined,
      integrationId: deploy.integrationId,
    },
    // `.addIntegration(webhook, { alias: 'second', enabled: true, configuration: { label: 'second' } })`
    second: {
      enabled: true,
      configurationType: undefined,
      configuration: { label: 'second' },
      disabledChannels: undefined,
      integrationId: deploy.integrationId,
    },
  };
  const plugins = {
    // `.addPlugin(logger, { alias: 'audit', configuration: { level: 'info' }, dependencies: { sink: { integrationAlias: 'webhook' } } })`
    audit: {
      name: 'logger',
      version: '0.2.0',
      definition: { name: 'logger', version: '0.2.0', configuration: { schema: {} } },
      alias: 'audit',
      configuration: { level: 'info' },
      id: 'plugin_logger_0_2_0',
      interfaces: {},
      integrations: { sink: { integrationId: deploy.integrationId, integrationAlias: 'webhook' } },
    },
  };
  const { botId, code, before } = deploy;
  return cli7UpdateBody({ botId, code, integrations, plugins, before });
}
