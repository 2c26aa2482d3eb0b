import { Type } from 'typebox';
import {
  CreateUserInputSchema,
  HITL_CHANNEL,
  HITL_INTEGRATION,
  HITL_INTERFACE_VERSION,
  StopHitlInputSchema,
} from '../handoffs/hitl-schemas.ts';
import { LLM_INTEGRATION, LLM_INTERFACE_VERSION } from '../llm/llm-integration.ts';
import { GenerationRequestFields, GenerationResponseSchema, ModelSchema } from '../llm/schemas.ts';
import { toJsonObject } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import type { Interface } from './schemas.ts';

// The interfaces Parley's built-in `hitl` and `llm` integrations implement, as the hub's lookups answer
// them (what `bp add hitl`, a definition's `.addInterface(hitl)` and a plugin's dependencies ask for):
// upstream's `interfaces/hitl` and `interfaces/llm` projects, which the hosted hub holds, described by
// JSON Schema in the stored interface's shape. Their ids are what the built-in integrations declare.

/** When they were first served (their records' dates: they do not change with a server's start). */
const SINCE = '2025-01-01T00:00:00.000Z';

/** What a built-in's record says whatever the interface. */
const record = {
  id: '',
  createdAt: SINCE,
  updatedAt: SINCE,
  name: '',
  version: '',
  title: '',
  description: '',
  iconUrl: '',
  readmeUrl: '',
  public: true,
};
/** An interface's parts: its entities, events, actions and channels. */
type Parts = Omit<Interface, keyof typeof record>;

const object = (properties: JsonObject, required: string[] = []): JsonObject => ({
  type: 'object',
  properties,
  required,
});
const string = (title: string, description: string): JsonObject => ({ type: 'string', title, description });
/** Upstream's actions and events are hidden in the Studio: the plugin calls them, not a bot's author. */
const hidden = { bpActionHiddenInStudio: 'true' };

const sessionId = string('HITL session ID', 'ID of the Botpress conversation representing the HITL session');

/** A message on the `hitl` channel: the kind's payload, and whom it is sent as (upstream's additions). */
function hitlMessage(payload: JsonObject, required: string[]): { schema: JsonObject } {
  return {
    schema: object(
      {
        ...payload,
        userId: { type: 'string', description: 'Allows sending a message pretending to be a certain user' },
        additionalData: {
          type: 'string',
          maxLength: 500,
          description: 'Additional data to send with the message, useful for custom integrations',
        },
      },
      required,
    ),
  };
}
const url = { type: 'string', minLength: 1 };

const hitl: Parts = {
  entities: {
    hitlSession: {
      title: 'HITL session',
      description: 'A HITL session, often referred to as a ticket or conversation in external systems',
      schema: object({}),
    },
  },
  events: {
    hitlAssigned: {
      attributes: hidden,
      schema: object(
        {
          conversationId: sessionId,
          userId: string(
            'Human agent user ID',
            'ID of the Botpress user representing the human agent assigned to the HITL session',
          ),
        },
        ['conversationId', 'userId'],
      ),
    },
    hitlStopped: { attributes: hidden, schema: object({ conversationId: sessionId }, ['conversationId']) },
  },
  actions: {
    createUser: {
      attributes: hidden,
      title: 'Create external user',
      description: 'Create an end user in the external service and in Botpress',
      input: { schema: toJsonObject(CreateUserInputSchema) },
      output: {
        schema: object(
          { userId: string('Botpress user ID', 'ID of the Botpress user representing the end user') },
          ['userId'],
        ),
      },
    },
    startHitl: {
      attributes: hidden,
      title: 'Start new HITL session',
      description: 'Create a new HITL session in the external service and in Botpress',
      input: {
        // The integration's own input says more of `hitlSession` (Parley's routing): the interface's
        // entity is whatever an implementation makes of it.
        schema: object(
          {
            userId: string('User ID', 'ID of the Botpress user representing the end user'),
            title: string('Title', 'Title of the HITL session (a ticket title)'),
            description: string('Description', 'Description of the HITL session (a ticket description)'),
            hitlSession: { type: 'object', title: 'Extra configuration', additionalProperties: true },
            messageHistory: {
              type: 'array',
              title: 'Conversation history',
              description: 'History of all messages in the conversation up to this point',
              items: { type: 'object', additionalProperties: true },
            },
          },
          ['userId'],
        ),
      },
      output: { schema: object({ conversationId: sessionId }, ['conversationId']) },
    },
    stopHitl: {
      attributes: hidden,
      title: 'Stop HITL session',
      description: 'Stop an existing HITL session in the external service',
      input: { schema: toJsonObject(StopHitlInputSchema) },
      output: { schema: object({}) },
    },
  },
  channels: {
    [HITL_CHANNEL]: {
      messages: {
        text: hitlMessage({ text: { type: 'string', minLength: 1 } }, ['text']),
        image: hitlMessage({ imageUrl: url }, ['imageUrl']),
        audio: hitlMessage({ audioUrl: url }, ['audioUrl']),
        video: hitlMessage({ videoUrl: url }, ['videoUrl']),
        file: hitlMessage({ fileUrl: url, title: { type: 'string' } }, ['fileUrl']),
        bloc: hitlMessage(
          { items: { type: 'array', items: { type: 'object', additionalProperties: true } } },
          ['items'],
        ),
      },
    },
  },
};

const modelRef = object({ id: { type: 'string', minLength: 1 } }, ['id']);

const llm: Parts = {
  entities: { modelRef: { schema: modelRef } },
  events: {},
  actions: {
    generateContent: {
      billable: true,
      cacheable: true,
      input: { schema: toJsonObject(Type.Object(GenerationRequestFields)) },
      output: { schema: toJsonObject(GenerationResponseSchema) },
    },
    listLanguageModels: {
      input: { schema: object({}) },
      output: {
        schema: object({ models: { type: 'array', items: toJsonObject(ModelSchema) } }, ['models']),
      },
    },
  },
  channels: {},
};

const builtIn = (
  name: string,
  version: string,
  title: string,
  description: string,
  parts: Parts,
): Interface => ({ ...record, id: `${name}@${version}`, name, version, title, description, ...parts });

/** Every built-in interface, once: public, found by every workspace, deployed by none. */
export const BUILT_IN_INTERFACES: readonly Interface[] = [
  builtIn(
    HITL_INTEGRATION,
    HITL_INTERFACE_VERSION,
    'Human in the loop',
    'Hand a conversation to a human agent: what the hitl plugin calls, and Parley’s built-in hitl integration implements.',
    hitl,
  ),
  builtIn(
    LLM_INTEGRATION,
    LLM_INTERFACE_VERSION,
    'LLM',
    'Generate content with a language model: what the official plugins and @botpress/cognitive call, and Parley’s built-in llm integration implements.',
    llm,
  ),
];

/** Whether a name is a built-in interface's: no workspace may create an interface of it. */
export const isBuiltInInterfaceName = (name: string) => BUILT_IN_INTERFACES.some((b) => b.name === name);
