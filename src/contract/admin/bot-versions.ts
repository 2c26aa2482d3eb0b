import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import { operation } from '../operation.ts';

const tag = 'Bot versions';

export const botVersionOperations = [
  // Not a `listOperation`: the hosted API answers every version at once, with no page.
  operation({
    id: 'listBotVersions',
    method: 'GET',
    path: '/bots/:id/versions',
    access: 'read',
    tag,
    summary: 'List a bot’s versions, newest first',
    description:
      'Every deploy of code (`parley deploy`, `bp deploy`, an updateBot or createBot with `code`) makes a version, as does createBotVersion; `deployed` marks the one the bot runs.',
    params: IdParam,
    response: Type.Object({ versions: Type.Array(Model.BotVersion) }),
  }),
  operation({
    id: 'getBotVersion',
    method: 'GET',
    path: '/bots/:id/versions/:versionId',
    access: 'read',
    tag,
    summary: 'Get a bot version, and where to download what it keeps',
    description:
      '`url` is a `data:` URL of one JSON document: the version, its `code` (a package or a bundle), its `definition` and its `tables` (name → schema, key column) as they were when it was made.',
    params: { ...IdParam, versionId: Type.String() },
    response: Type.Object({ url: Type.String(), version: Model.BotVersion }),
  }),
  operation({
    id: 'createBotVersion',
    method: 'POST',
    path: '/bots/:id/versions',
    access: 'write',
    tag,
    summary: 'Keep what a bot runs now as a named version',
    params: IdParam,
    body: {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      description: Type.Optional(Type.String({ maxLength: 2000 })),
    },
    response: Type.Object({ version: Model.BotVersion }),
  }),
  operation({
    id: 'deployBotVersion',
    method: 'POST',
    path: '/bots/:id/versions/deploy',
    access: 'write',
    tag,
    summary: 'Make a bot run one of its versions (a rollback, or forward again)',
    description:
      'In one update: the bot’s code and definition become the version’s; its configuration values, secrets, integrations and tables stay. Conversations go on: a dialog continues where it stood when the version has its node, and starts over otherwise.',
    params: IdParam,
    body: { versionId: Type.String() },
    response: EmptySchema,
  }),
] as const;
