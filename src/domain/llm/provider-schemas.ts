import { Type } from 'typebox';
import type { Static } from 'typebox';
import { Timestamp } from '../shared/schemas.ts';
import { LLM_MODEL_SOURCES } from '../../value-sets.ts';

// A workspace's own providers and a bot's model choices as the Admin API answers them, and what changes
// them: a module without the store, so the contract declares the Admin API with them.

/** Most providers of one workspace, and most models one provider lists. */
export const MAX_PROVIDERS_PER_WORKSPACE = 20;
export const MAX_MODELS_PER_PROVIDER = 500;

/** What `<name>:<model>` starts with; `default` is the server's. */
export const ProviderName = Type.String({
  pattern: '^[a-z0-9][a-z0-9-]{0,39}$',
  description:
    'Lower-case letters, digits and `-` (`default` is the server’s): `<name>:<model>` routes to it',
});

const ModelId = Type.String({ minLength: 1, maxLength: 200 });

const Price = Type.Object({
  input: Type.Number({ minimum: 0, description: 'US dollars per million input tokens' }),
  output: Type.Number({ minimum: 0, description: 'US dollars per million output tokens' }),
});
export type Price = Static<typeof Price>;

const Prices = Type.Record(Type.String(), Price, {
  description: 'By model id: what a call’s `cost` is computed from (a model without one costs 0)',
});

const BaseUrl = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'The OpenAI-compatible endpoint, up to `/v1`; it must be on the public internet unless the operator allows private ones (`PARLEY_LLM_PRIVATE_TARGETS`)',
});

export const LlmProviderSchema = Type.Object({
  name: ProviderName,
  baseUrl: Type.String(),
  /** Whether a key is set: the key itself is never answered. */
  hasApiKey: Type.Boolean({ description: 'Whether a key is set (the key itself is never shown again)' }),
  models: Type.Array(Type.String(), { description: 'The model ids `<name>:<id>` may name' }),
  modelsFrom: Type.Enum(LLM_MODEL_SOURCES, {
    description: '`declared` when created or updated with `models`; `provider`: read from its `GET /models`',
  }),
  prices: Prices,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type LlmProvider = Static<typeof LlmProviderSchema>;

export const CreateLlmProviderBodySchema = Type.Object({
  name: ProviderName,
  baseUrl: BaseUrl,
  apiKey: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 4000,
      description: 'Sent as `Authorization: Bearer`; write-only',
    }),
  ),
  models: Type.Optional(
    Type.Array(ModelId, {
      maxItems: MAX_MODELS_PER_PROVIDER,
      description: 'The model ids it serves; absent: read from its `GET /models`',
    }),
  ),
  prices: Type.Optional(Prices),
});
export type CreateLlmProviderBody = Static<typeof CreateLlmProviderBodySchema>;

export const UpdateLlmProviderBodySchema = Type.Object({
  baseUrl: Type.Optional(BaseUrl),
  apiKey: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 4000 }), Type.Null()], {
      description: 'A new key; `null` removes it',
    }),
  ),
  models: Type.Optional(Type.Array(ModelId, { maxItems: MAX_MODELS_PER_PROVIDER })),
  prices: Type.Optional(Prices),
});
export type UpdateLlmProviderBody = Static<typeof UpdateLlmProviderBodySchema>;

const ModelRef = Type.String({
  minLength: 3,
  maxLength: 250,
  description: '`<provider>:<model>`: `default:<model>` for the server’s provider',
});

export const BotModelsSchema = Type.Object({
  best: Type.Union([ModelRef, Type.Null()], {
    description: 'The model `best` and `auto` name for this bot; null: the server’s',
  }),
  fast: Type.Union([ModelRef, Type.Null()], {
    description: 'The model `fast` names for this bot; null: the server’s',
  }),
  available: Type.Array(Type.String(), {
    description: 'The `<provider>:<model>` references the bot may choose from',
  }),
});
export type BotModels = Static<typeof BotModelsSchema>;

export const UpdateBotModelsBodySchema = Type.Object({
  best: Type.Optional(BotModelsSchema.properties.best),
  fast: Type.Optional(BotModelsSchema.properties.fast),
});
export type UpdateBotModelsBody = Static<typeof UpdateBotModelsBodySchema>;
