import { Type } from 'typebox';
import type { Static, TUnsafe } from 'typebox';
import { FileSchema, KnowledgeBaseSchema, PassageSchema } from '../domain/files/schemas.ts';
import { JobSchema, RowSchema, TableSchema } from '../domain/tables/schemas.ts';
import {
  WebchatConversationSchema,
  WebchatMessageSchema,
  WebchatUserSchema,
} from '../domain/webchat/models.ts';
import { ErrorBodySchema } from './schemas.ts';
import { MemberSchema, WorkspaceSchema } from '../domain/workspace/schemas.ts';
import { BotSchema, BotVersionSchema } from '../domain/bots/schemas.ts';
import {
  UserSchema,
  ConversationSchema,
  EventSchema,
  MessageSchema,
  StateSchema,
  WorkflowSchema,
} from '../domain/runtime/schemas.ts';
import {
  ChatConversationSchema,
  ChatEventSchema,
  ChatMessageSchema,
  ChatUserSchema,
} from '../domain/chat/schemas.ts';
import { IntegrationSchema } from '../domain/integrations/schemas.ts';
import { InterfaceSchema, PluginSchema } from '../domain/packages/schemas.ts';
import { WebhookSubscriptionSchema } from '../domain/webhooks/schemas.ts';
import { LlmProviderSchema } from '../domain/llm/provider-schemas.ts';
import { HandoffSchema } from '../domain/handoffs/schemas.ts';

/**
 * The models several operations answer, each by the name the OpenAPI document gives it (its
 * `components.schemas` key). One document holds every API, so the Chat API's and the webchat's own
 * views of a record are prefixed; the Runtime API's keep the hosted API's plain names.
 */
const MODELS = {
  Bot: BotSchema,
  BotVersion: BotVersionSchema,
  Integration: IntegrationSchema,
  Interface: InterfaceSchema,
  Plugin: PluginSchema,
  Workspace: WorkspaceSchema,
  Member: MemberSchema,
  WebhookSubscription: WebhookSubscriptionSchema,
  LlmProvider: LlmProviderSchema,
  Handoff: HandoffSchema,
  User: UserSchema,
  Conversation: ConversationSchema,
  Message: MessageSchema,
  Event: EventSchema,
  State: StateSchema,
  Workflow: WorkflowSchema,
  File: FileSchema,
  KnowledgeBase: KnowledgeBaseSchema,
  Passage: PassageSchema,
  Table: TableSchema,
  Row: RowSchema,
  TableJob: JobSchema,
  ChatUser: ChatUserSchema,
  ChatConversation: ChatConversationSchema,
  ChatMessage: ChatMessageSchema,
  ChatEvent: ChatEventSchema,
  WebchatUser: WebchatUserSchema,
  WebchatConversation: WebchatConversationSchema,
  WebchatMessage: WebchatMessageSchema,
  ErrorBody: ErrorBodySchema,
};

type ModelName = keyof typeof MODELS;

/** A named model as registered: every one is an object schema. */
interface NamedModel {
  readonly $id: string;
  readonly type: 'object';
}

/**
 * Every named model with its name as `$id`: what the server registers (`addSchema`, so the OpenAPI
 * document lists it) and what the validators and serializers resolve a reference with.
 */
export const NAMED_MODELS: readonly NamedModel[] = Object.entries(MODELS).map(([name, schema]) => ({
  ...schema,
  $id: name,
}));

/** A reference to a named model, typed as the model's values. */
function ref<Name extends ModelName>(name: Name): TUnsafe<Static<(typeof MODELS)[Name]>> {
  return Type.Unsafe<Static<(typeof MODELS)[Name]>>(Type.Ref(name));
}

/** References to the named models, for the operations' answers: `Model.Bot` is `{ $ref: 'Bot' }`. */
export const Model = {
  Bot: ref('Bot'),
  BotVersion: ref('BotVersion'),
  Integration: ref('Integration'),
  Interface: ref('Interface'),
  Plugin: ref('Plugin'),
  Workspace: ref('Workspace'),
  Member: ref('Member'),
  WebhookSubscription: ref('WebhookSubscription'),
  LlmProvider: ref('LlmProvider'),
  Handoff: ref('Handoff'),
  User: ref('User'),
  Conversation: ref('Conversation'),
  Message: ref('Message'),
  Event: ref('Event'),
  State: ref('State'),
  Workflow: ref('Workflow'),
  File: ref('File'),
  KnowledgeBase: ref('KnowledgeBase'),
  Passage: ref('Passage'),
  Table: ref('Table'),
  Row: ref('Row'),
  TableJob: ref('TableJob'),
  ChatUser: ref('ChatUser'),
  ChatConversation: ref('ChatConversation'),
  ChatMessage: ref('ChatMessage'),
  ChatEvent: ref('ChatEvent'),
  WebchatUser: ref('WebchatUser'),
  WebchatConversation: ref('WebchatConversation'),
  WebchatMessage: ref('WebchatMessage'),
  ErrorBody: ref('ErrorBody'),
};

/** Added to every route's responses, so the OpenAPI document shows the error body. */
export const errorResponses = { '4xx': Model.ErrorBody, '5xx': Model.ErrorBody };
