import { Type } from 'typebox';
import { invalidPayload } from '../shared/errors.ts';
import { randomBytes } from 'node:crypto';
import { compiledOnFirstUse } from '../shared/json-schema.ts';
import { toJsonObject } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { LlmGateway } from './gateway.ts';
import { DEFAULT_PROVIDER } from './providers.ts';
import { GenerationRequestFields } from './schemas.ts';
import type { GenerationRequest, GenerationResponse, Model } from './schemas.ts';

/** The alias of the built-in LLM integration in every bot's `integrations`. */
export const LLM_INTEGRATION = 'llm';
/** The version of the hosted `llm` interface whose actions it implements. */
export const LLM_INTERFACE_VERSION = '11.0.0';

const isGenerationRequest = compiledOnFirstUse<GenerationRequest>(Type.Object(GenerationRequestFields));

const ACTIONS = new Set(['generateContent', 'listLanguageModels']);

/** The other aliases a bot installed the integration under (`bots.ts` keeps them), by alias. */
export type LlmAliasesOf = (botId: string) => Promise<Record<string, { enabled: boolean }>>;

/**
 * The `llm` interface's actions (`generateContent`, `listLanguageModels`), as the hosted platform's LLM
 * integrations implement them, over the gateway: what SDK bots, the official plugins and
 * `@botpress/cognitive` in its default mode call with `callAction("llm:…")`.
 */
export class LlmIntegration {
  private aliasesOf: LlmAliasesOf = async () => ({});

  constructor(private readonly gateway: LlmGateway) {}

  /** Tells it where bots' aliases of it are kept (the bots, made after it). */
  useAliases(aliasesOf: LlmAliasesOf): void {
    this.aliasesOf = aliasesOf;
  }

  /** Whether `alias:name` is one of its actions for the bot: under `llm`, or an alias it enabled. */
  async handles(botId: string, alias: string, name: string): Promise<boolean> {
    if (!ACTIONS.has(name)) return false;
    if (alias === LLM_INTEGRATION) return true;
    const aliases = await this.aliasesOf(botId);
    return Object.hasOwn(aliases, alias) && aliases[alias]?.enabled === true;
  }

  /** Whether a provider answers the calls of a workspace's bots (else each says which settings to set). */
  configuredFor(workspaceId: string): Promise<boolean> {
    return this.gateway.configuredFor(workspaceId);
  }

  async call(actor: BotActor, alias: string, name: string, input: JsonObject): Promise<JsonObject> {
    if (name === 'listLanguageModels')
      return { models: (await this.gateway.listModels(actor)).map(asInterfaceModel) };
    if (!isGenerationRequest(input)) {
      const error = isGenerationRequest.errors?.[0];
      throw invalidPayload(`input${error?.instancePath ?? ''} ${error?.message ?? 'is invalid'}`);
    }
    const response = await this.gateway.generate(actor, await this.underAlias(actor, alias, input));
    return toJsonObject(asGenerateContentOutput(response, alias));
  }

  /**
   * Under another alias, a model id is a hosted integration's (`gpt-4o-mini` for `openai`) unless the
   * provider serves it: one it does not serve is named `<alias>:<id>`, which the gateway answers with the
   * best model and a warning, as it does such a name on the Cognitive API.
   */
  private async underAlias(
    actor: BotActor,
    alias: string,
    input: GenerationRequest,
  ): Promise<GenerationRequest> {
    const { model } = input;
    if (alias === LLM_INTEGRATION || typeof model !== 'object' || Array.isArray(model)) return input;
    const served = (await this.gateway.listModels(actor)).some((m) => m.name === model.id);
    return served ? input : { ...input, model: `${alias}:${model.id}` };
  }
}

/**
 * A model as the interface lists it, by the id `generateContent` takes back as `model.id`: the server
 * provider's own id, as the hosted integrations list theirs; a workspace provider's model keeps its
 * `<name>:` (a bare id is the server's).
 */
function asInterfaceModel(model: Model): Model {
  return model.id === `${DEFAULT_PROVIDER}:${model.name}` ? { ...model, id: model.name } : model;
}

/** The interface's `GenerateContentOutput` for a gateway answer. */
function asGenerateContentOutput(response: GenerationResponse, alias: string) {
  const { metadata } = response;
  const toolCalls = response.toolCalls?.map((call) => ({
    id: call.id,
    type: 'function' as const,
    function: { name: call.name, arguments: call.input },
  }));
  return {
    id: `${alias}_${randomBytes(8).toString('hex')}`,
    provider: metadata.provider,
    model: metadata.model ?? '',
    choices: [
      {
        type: toolCalls && toolCalls.length > 0 ? ('tool_calls' as const) : ('text' as const),
        ...(toolCalls && toolCalls.length > 0 && { toolCalls }),
        content: response.output === '' && toolCalls ? null : response.output,
        role: 'assistant' as const,
        index: 0,
        stopReason: metadata.stopReason ?? 'other',
      },
    ],
    usage: metadata.usage,
    botpress: { cost: metadata.cost },
  };
}
