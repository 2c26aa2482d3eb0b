import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import { operation } from '../operation.ts';
import { BOT_RUNTIMES } from '../../value-sets.ts';
import { Nullable } from '../../domain/shared/schemas.ts';
import { PackageDefinitionSchema } from '../../domain/bots/package-format.ts';

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
    id: 'getBotPackage',
    method: 'GET',
    path: '/bots/:id/package',
    access: 'read',
    tag,
    summary:
      'Get the definition of the Parley package a bot runs, or of one of its versions, without its code',
    description:
      'Parley: the package `parley deploy` deployed (its manifest, actions, workflows with their nodes, cards and transitions, knowledge bases and tables), as the console draws its flows; the compiled code is left out. A bot whose code is a bundle (`bp deploy`), or that has none, answers its `runtime` and no `package`.',
    params: IdParam,
    query: {
      versionId: Type.Optional(
        Type.String({ description: 'One of the bot’s versions (default: the code the bot runs now)' }),
      ),
    },
    response: Type.Object({
      runtime: Nullable(Type.Enum(BOT_RUNTIMES)),
      versionId: Type.Optional(
        Type.String({ description: 'The version it is (none for code deployed before versions were kept)' }),
      ),
      package: Type.Optional(PackageDefinitionSchema),
    }),
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
