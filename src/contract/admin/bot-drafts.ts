import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { operation } from '../operation.ts';
import { CardSchema, CODE_MEDIA_TYPE } from '../../domain/bots/package-format.ts';
import {
  BotDraftSchema,
  DraftFilesSchema,
  DraftLayoutSchema,
  PackageProblemSchema,
} from '../../domain/bots/schemas.ts';

const tag = 'Bot drafts';
const Problems = Type.Array(PackageProblemSchema, {
  description: 'What `parley validate` reports of the package the files make (none: it compiles)',
});

// Parley's own: a bot's draft, the package source the console's Flow tab edits, one per bot.
export const botDraftOperations = [
  operation({
    id: 'getBotDraft',
    method: 'GET',
    path: '/bots/:id/draft',
    access: 'read',
    tag,
    summary: 'Get a bot’s draft: the files of its package as the console edits them',
    description:
      'Parley: the saved draft; without one, the files of the package the bot runs (`saved: false`; a package `parley deploy` deployed keeps compiled code, so its code files hold that JavaScript: `codeFrom: compiled`), or of a blank package for a bot without code.',
    params: IdParam,
    response: Type.Object({ draft: BotDraftSchema }),
  }),
  operation({
    id: 'validateBotDraft',
    method: 'POST',
    path: '/bots/:id/draft/validate',
    // It keeps nothing, but only those who may deploy a bot check drafts of it.
    access: 'write',
    tag,
    summary: 'Check package files as `parley validate` does, without keeping them',
    description:
      'Parley: each problem with its file, line, column and field (a JSON pointer into the file), with the messages of `parley validate`.',
    params: IdParam,
    body: { files: DraftFilesSchema },
    response: Type.Object({ problems: Problems }),
  }),
  operation({
    id: 'saveBotDraft',
    method: 'PUT',
    path: '/bots/:id/draft',
    access: 'write',
    tag,
    summary: 'Save a bot’s draft (its package files and where its nodes are drawn)',
    description: 'Parley: a draft with problems is kept too; the answer lists them.',
    params: IdParam,
    body: { files: DraftFilesSchema, layout: DraftLayoutSchema },
    response: Type.Object({ draft: BotDraftSchema, problems: Problems }),
  }),
  operation({
    id: 'discardBotDraft',
    method: 'DELETE',
    path: '/bots/:id/draft',
    access: 'write',
    tag,
    summary: 'Discard a bot’s draft',
    params: IdParam,
    response: EmptySchema,
  }),
  operation({
    id: 'deployBotDraft',
    method: 'POST',
    path: '/bots/:id/draft/deploy',
    access: 'write',
    tag,
    summary: 'Deploy a bot’s saved draft as a new version',
    description:
      'Parley: compiled as `parley deploy` compiles a package folder, and deployed as a new version with `note` (`listBotVersions`, `deployBotVersion` roll it back). A draft with problems deploys nothing (400, the problems in `metadata.problems`); neither does one that changes the bot’s tables (`parley deploy` migrates tables).',
    params: IdParam,
    body: { note: Type.Optional(Type.String({ maxLength: 2000 })) },
    response: Type.Object({ versionId: Type.String() }),
  }),
] as const;

/** The JSON Schema of a workflow's cards (a union by `type`): the console's card forms are made from it. */
export const CARD_SCHEMA = CardSchema;

/** A card field holding code says so with this `contentMediaType`: the console edits it as code. */
export { CODE_MEDIA_TYPE };
