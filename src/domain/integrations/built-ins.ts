import { CHAT_INTEGRATION } from '../chat/channels.ts';
import {
  CreateUserInputSchema,
  HITL_CHANNEL,
  HITL_INTEGRATION,
  HITL_INTERFACE_VERSION,
  StartHitlInputSchema,
  StopHitlInputSchema,
} from '../handoffs/hitl-schemas.ts';
import type { HitlAction } from '../handoffs/hitl-schemas.ts';
import { LLM_INTEGRATION, LLM_INTERFACE_VERSION } from '../llm/llm-integration.ts';
import { toJsonObject } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import type { Integration } from './schemas.ts';

// Parley's built-in integrations, as the hub's lookups answer them under their usual names and
// versions (what `bp add chat`, a definition's `.addIntegration(chat)` and CLI 7's `bp deploy`, which
// looks up each integration of the bot, ask for). They run inside Parley: nothing is deployed for them.

/** When the built-ins were first served (their records' dates: they do not change with a server's start). */
const SINCE = '2025-01-01T00:00:00.000Z';

/** The webchat's own integration: the ADK pins `webchat@0.3.0`. */
export const WEBCHAT_INTEGRATION = 'webchat';

const anyObject: JsonObject = { type: 'object', additionalProperties: true };
const action = (input: JsonObject, description: string): JsonObject => ({
  title: description,
  input: { schema: input },
  output: { schema: anyObject },
});

interface BuiltIn {
  id: string;
  name: string;
  version: string;
  title: string;
  description: string;
  channels?: Record<string, JsonObject>;
  actions?: Record<string, JsonObject>;
  events?: Record<string, JsonObject>;
  /** The interfaces it implements, by alias, as `getIntegration` answers them. */
  interfaces?: Record<string, JsonObject>;
}

/**
 * A built-in's declaration of an interface it implements under the interface's own names, as a
 * definition's `.addPlugin(...)` reads it to wire a plugin's interface to the bot's installation (each
 * entity, action, event and channel of the interface to the integration's of that name). The interface
 * is named by its built-in interface's id (`built-in-interfaces.ts`), which every hub lookup finds.
 */
function implementing(
  name: string,
  version: string,
  parts: { entities: string[]; actions: string[]; events: string[]; channels: string[] },
): JsonObject {
  const named = (keys: string[]) => Object.fromEntries(keys.map((key) => [key, { name: key }]));
  return {
    id: `${name}@${version}`,
    name,
    version,
    entities: named(parts.entities),
    actions: named(parts.actions),
    events: named(parts.events),
    channels: named(parts.channels),
  };
}

const chatDefinition = {
  title: 'Chat',
  description:
    'Parley’s built-in Chat API and webchat: end users talk to the bot over HTTP and SSE, or in a browser.',
  channels: { channel: { messages: {} } },
  events: { custom: { schema: anyObject } },
};

/** The built-in chat channel as bots' `integrations` show it (its id is the name alone). */
export const BUILT_IN_CHAT = {
  version: '1.0.0',
  title: chatDefinition.title,
  description: chatDefinition.description,
};

const hitlActions: Record<HitlAction, JsonObject> = {
  createUser: action(toJsonObject(CreateUserInputSchema), 'Create the end user of a handoff'),
  startHitl: action(toJsonObject(StartHitlInputSchema), 'Hand the conversation to an agent'),
  stopHitl: action(toJsonObject(StopHitlInputSchema), 'End the handoff'),
};

/**
 * Every built-in, once. `chat` is at two versions: 1.0.0, the one every bot's `integrations` shows
 * (id `chat`), and 0.7.3, the line the ADK pins (`chat@0.7.3` in its agents' `agent.config.ts`), which a
 * range such as `^0.7.0` resolves to as well. `llm` and `hitl` carry the versions of the hosted interfaces
 * they implement.
 */
export const BUILT_IN_INTEGRATIONS: readonly BuiltIn[] = [
  { id: CHAT_INTEGRATION, name: CHAT_INTEGRATION, ...chatDefinition, version: BUILT_IN_CHAT.version },
  { id: `${CHAT_INTEGRATION}@0.7.3`, name: CHAT_INTEGRATION, version: '0.7.3', ...chatDefinition },
  {
    id: WEBCHAT_INTEGRATION,
    name: WEBCHAT_INTEGRATION,
    version: '0.3.0',
    title: 'Webchat',
    description:
      'Parley’s webchat: the official webchat speaks to the bot’s built-in chat channel (its client id is the channel’s webhook id).',
    channels: { channel: { messages: {} } },
  },
  {
    id: LLM_INTEGRATION,
    name: LLM_INTEGRATION,
    version: LLM_INTERFACE_VERSION,
    title: 'LLM',
    description:
      'Parley’s built-in LLM integration: the `llm` interface’s generateContent and listLanguageModels, answered by the server’s model provider or the workspace’s.',
    actions: {
      generateContent: action(anyObject, 'Generate content with a language model'),
      listLanguageModels: action(anyObject, 'List the language models'),
    },
    interfaces: {
      [LLM_INTEGRATION]: implementing(LLM_INTEGRATION, LLM_INTERFACE_VERSION, {
        entities: ['modelRef'],
        actions: ['generateContent', 'listLanguageModels'],
        events: [],
        channels: [],
      }),
    },
  },
  {
    id: HITL_INTEGRATION,
    name: HITL_INTEGRATION,
    version: HITL_INTERFACE_VERSION,
    title: 'Human in the loop',
    description:
      'Parley’s built-in `hitl` integration: handoffs to the workspace’s agents, answered in the console’s inbox.',
    channels: { [HITL_CHANNEL]: { messages: {} } },
    actions: hitlActions,
    events: { hitlAssigned: { schema: anyObject }, hitlStopped: { schema: anyObject } },
    interfaces: {
      [HITL_INTEGRATION]: implementing(HITL_INTEGRATION, HITL_INTERFACE_VERSION, {
        entities: ['hitlSession'],
        actions: Object.keys(hitlActions),
        events: ['hitlAssigned', 'hitlStopped'],
        channels: [HITL_CHANNEL],
      }),
    },
  },
];

/** Whether a name is a built-in's: no workspace may publish an integration of it. */
export const isBuiltInName = (name: string) => BUILT_IN_INTEGRATIONS.some((b) => b.name === name);

/** A built-in as the Admin API answers an integration: public, approved, running in Parley. */
export function builtInIntegration(builtIn: BuiltIn): Integration {
  return {
    id: builtIn.id,
    createdAt: SINCE,
    updatedAt: SINCE,
    name: builtIn.name,
    version: builtIn.version,
    title: builtIn.title,
    description: builtIn.description,
    iconUrl: '',
    readmeUrl: '',
    public: true,
    visibility: 'public',
    verificationStatus: 'approved',
    dev: false,
    url: null,
    configuration: { schema: anyObject },
    identifier: {},
    user: { tags: {} },
    channels: Object.fromEntries(
      Object.entries(builtIn.channels ?? {}).map(([name, channel]) => [
        name,
        { ...channel, conversation: { tags: {} }, message: { tags: {} } },
      ]),
    ),
    states: {},
    events: builtIn.events ?? {},
    actions: builtIn.actions ?? {},
    entities: {},
    interfaces: builtIn.interfaces ?? {},
    configurations: {},
    secrets: [],
    hasCode: false,
  };
}

/** The built-ins, as integrations. */
export const builtInIntegrations = (): Integration[] => BUILT_IN_INTEGRATIONS.map(builtInIntegration);
