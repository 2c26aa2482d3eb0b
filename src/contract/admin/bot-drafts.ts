import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { operation } from '../operation.ts';
import { CardSchema, CODE_MEDIA_TYPE } from '../../domain/bots/package-format.ts';
import {
  BotDraftSchema,
  DraftFilesSchema,
  DraftLayoutSchema,
  DraftTestTurnSchema,
  DRAFT_TEST_TURNS_MAX,
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
  operation({
    id: 'startBotDraftTest',
    method: 'POST',
    path: '/bots/:id/draft/test',
    access: 'write',
    tag,
    summary: 'Run a bot’s draft for a test conversation, without deploying it to the bot',
    description:
      'Parley: compiles `files` (default: the draft, saved or not) as `deployBotDraft` does and runs them as the bot’s draft twin, a bot of the workspace that is never listed, with the bot’s configuration values and secrets, redeployed when the code changed. Talk to it through the Chat API at the `webhookId` answered; the bot’s own conversations keep its deployed code. A draft with problems runs nothing (400, the problems in `metadata.problems`).',
    params: IdParam,
    body: { files: Type.Optional(DraftFilesSchema) },
    response: Type.Object({
      webhookId: Type.String({ description: 'The Chat API channel of the draft: /chat/{webhookId}' }),
    }),
  }),
  operation({
    id: 'listBotDraftTestTurns',
    method: 'GET',
    path: '/bots/:id/draft/test/turns',
    // A read, for the developers who test the draft only (viewers are refused, as they are the test).
    access: 'read',
    tag,
    summary: 'What each turn of a test conversation with a bot’s draft ran',
    description: `Parley: the turns of the test conversation that \`messageId\` (a message of the draft’s Chat API channel) is in, oldest first, the latest ${DRAFT_TEST_TURNS_MAX}: the nodes, cards and transitions each ran, the conversation, user and workflow variables after it, the messages it sent and its log lines (those with \`call\` tell of its model and tool calls). Developers only.`,
    params: IdParam,
    query: { messageId: Type.String() },
    response: Type.Object({ turns: Type.Array(DraftTestTurnSchema) }),
  }),
] as const;

/** The JSON Schema of a workflow's cards (a union by `type`): the console's card forms are made from it. */
export const CARD_SCHEMA = CardSchema;

/** A card field holding code says so with this `contentMediaType`: the console edits it as code. */
export { CODE_MEDIA_TYPE };
