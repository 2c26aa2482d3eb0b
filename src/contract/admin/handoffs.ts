import { Type } from 'typebox';
import { IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import {
  AssignHandoffBodySchema,
  HandoffEventSchema,
  HandoffMessageBodySchema,
  ListHandoffsQuerySchema,
} from '../../domain/handoffs/schemas.ts';
import { listOperation, operation } from '../operation.ts';

const tag = 'Handoffs';
const HandoffParams = { ...IdParam, handoffId: Type.String() };
const HandoffAnswer = Type.Object({ handoff: Model.Handoff });

/**
 * Human handoffs: the conversations a bot handed to a person. Members read them; taking, answering,
 * transferring and resolving them needs the `handoffs.answer` permission (the agent role and above).
 */
export const handoffOperations = [
  listOperation({
    id: 'listWorkspaceHandoffs',
    path: '/handoffs',
    tag,
    summary: 'List the handoffs of every bot of the workspace, newest first (an inbox’s queue in one call)',
    query: ListHandoffsQuerySchema.properties,
    key: 'handoffs',
    item: Model.Handoff,
  }),
  listOperation({
    id: 'listHandoffs',
    path: '/bots/:id/handoffs',
    tag,
    summary: 'List a bot’s handoffs, newest first (the queue: `status=pending`)',
    params: IdParam,
    query: ListHandoffsQuerySchema.properties,
    key: 'handoffs',
    item: Model.Handoff,
  }),
  operation({
    id: 'getHandoff',
    method: 'GET',
    path: '/bots/:id/handoffs/:handoffId',
    access: 'read',
    tag,
    summary: 'Get a handoff, with its conversation’s messages so far and what happened to it',
    description:
      'The messages are the conversation’s latest 100, oldest first: the bot’s, the visitor’s (those sent during the handoff too, which the bot’s workflows did not get) and the agents’. A `hitl` handoff’s are the visitor’s conversation before it opened, then its hitl conversation (the agents’ messages, and what the bot copied there: a copy naming a user in `payload.userId` is shown as the visitor’s, `incoming`), each message once.',
    params: HandoffParams,
    response: Type.Object({
      handoff: Model.Handoff,
      messages: Type.Array(Model.Message),
      events: Type.Array(HandoffEventSchema),
    }),
  }),
  operation({
    id: 'assignHandoff',
    method: 'POST',
    path: '/bots/:id/handoffs/:handoffId/assign',
    access: 'write',
    tag,
    summary: 'Take an open handoff, or give it to a colleague (a transfer)',
    description:
      'The agent joins the conversation as a user of the bot named after them: the visitor sees their name and their messages’ `userId`. The bot gets a `handoff.assigned` event (and, for a `hitl` handoff, `hitl:hitlAssigned` in its hitl conversation).',
    params: HandoffParams,
    body: AssignHandoffBodySchema.properties,
    response: HandoffAnswer,
  }),
  operation({
    id: 'createHandoffMessage',
    method: 'POST',
    path: '/bots/:id/handoffs/:handoffId/messages',
    access: 'write',
    tag,
    summary: 'Answer the visitor of a handoff you have (any Chat API message payload)',
    description:
      'The message is posted in the conversation from the agent’s user, as the bot’s side of it: the visitor receives it through the Chat API and the webchat, and the bot’s workflows do not run. In a `hitl` handoff it is posted in the hitl conversation instead, from the agent’s user, for the bot to forward (as on the hosted platform): the bot gets it as an incoming message.',
    params: HandoffParams,
    body: HandoffMessageBodySchema.properties,
    response: Type.Object({ message: Model.Message }),
  }),
  operation({
    id: 'resolveHandoff',
    method: 'POST',
    path: '/bots/:id/handoffs/:handoffId/resolve',
    access: 'write',
    tag,
    summary: 'Close an open handoff: the bot resumes the conversation',
    description:
      'The bot gets a `handoff.resolved` event (and `hitl:hitlStopped` for a `hitl` handoff); a Parley bot’s dialog goes on where its handoff card says.',
    params: HandoffParams,
    response: HandoffAnswer,
  }),
] as const;
