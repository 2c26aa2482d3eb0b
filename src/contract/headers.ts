/**
 * Header names of the wire protocol, lower-case as Node presents them: what the APIs read and the official
 * clients send, named once for the server, the engine's calls to bundles, the CLI and the console (which
 * bundles this module: it must stay free of imports).
 */
export const HEADERS = {
  authorization: 'authorization',
  workspaceId: 'x-workspace-id',
  botId: 'x-bot-id',
  integrationId: 'x-integration-id',
  integrationAlias: 'x-integration-alias',
  /** Sent by the official client, like the next three: Parley does not read them, but browsers may send them. */
  integrationName: 'x-integration-name',
  userId: 'x-user-id',
  userRole: 'x-user-role',
  multipleIntegrations: 'x-multiple-integrations',
  /** copyFile's destination bot, an argument of that operation. */
  destinationBotId: 'x-destination-bot-id',
  userKey: 'x-user-key',
  /** The webchat's: a site's backend proves it is the channel's with its encryption key. */
  adminSecret: 'x-admin-secret',
  retryAfter: 'retry-after',
} as const;
