import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import {
  BotModelsSchema,
  CreateLlmProviderBodySchema,
  UpdateBotModelsBodySchema,
  UpdateLlmProviderBodySchema,
} from '../../domain/llm/provider-schemas.ts';
import { operation } from '../operation.ts';

const tag = 'Model providers';
const NameParam = { name: Type.String({ description: 'The provider’s name' }) };
const ProviderAnswer = Type.Object({ provider: Model.LlmProvider });

/**
 * A workspace's own OpenAI-compatible providers (`<name>:<model>` routes to them), and each bot's
 * choice of the models `best` and `fast` name: Parley's own operations, the hosted platform has none.
 */
export const llmProviderOperations = [
  operation({
    id: 'listLlmProviders',
    method: 'GET',
    path: '/llm-providers',
    access: 'read',
    tag,
    summary: 'List the workspace’s own model providers (never their keys)',
    description: 'Developers and above.',
    response: Type.Object({ providers: Type.Array(Model.LlmProvider) }),
  }),
  operation({
    id: 'createLlmProvider',
    method: 'POST',
    path: '/llm-providers',
    access: 'write',
    tag,
    summary: 'Add an OpenAI-compatible provider to the workspace: its bots may name `<name>:<model>`',
    description:
      'Its models are read from its `GET /models` unless declared. Its key is kept as a secret: no answer shows it again. Administrators and owners.',
    body: CreateLlmProviderBodySchema.properties,
    status: 201,
    response: ProviderAnswer,
  }),
  operation({
    id: 'updateLlmProvider',
    method: 'PUT',
    path: '/llm-providers/:name',
    access: 'write',
    tag,
    summary: 'Change a provider’s URL, key, declared models or prices',
    description: 'Administrators and owners.',
    params: NameParam,
    body: UpdateLlmProviderBodySchema.properties,
    response: ProviderAnswer,
  }),
  operation({
    id: 'refreshLlmProviderModels',
    method: 'POST',
    path: '/llm-providers/:name/refresh-models',
    access: 'write',
    tag,
    summary: 'Read a provider’s model list again from its `GET /models`',
    description: 'Administrators and owners.',
    params: NameParam,
    response: ProviderAnswer,
  }),
  operation({
    id: 'deleteLlmProvider',
    method: 'DELETE',
    path: '/llm-providers/:name',
    access: 'write',
    tag,
    summary: 'Remove a provider (bots that chose its models go back to the server’s)',
    description: 'Administrators and owners.',
    params: NameParam,
    response: EmptySchema,
  }),
] as const;

/** A bot's own `best` and `fast`, over the server's. */
export const botModelOperations = [
  operation({
    id: 'getBotModels',
    method: 'GET',
    path: '/bots/:id/models',
    access: 'read',
    tag,
    summary: 'Get the models a bot chose for `best` and `fast`, and those it may choose from',
    params: IdParam,
    response: BotModelsSchema,
  }),
  operation({
    id: 'updateBotModels',
    method: 'PUT',
    path: '/bots/:id/models',
    access: 'write',
    tag,
    summary: 'Choose the models `best` (and `auto`) and `fast` name for a bot; null: the server’s',
    params: IdParam,
    body: UpdateBotModelsBodySchema.properties,
    response: BotModelsSchema,
  }),
] as const;
