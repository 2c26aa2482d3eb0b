import { Type } from 'typebox';
import type { Static } from 'typebox';
import { JsonObject } from '../shared/schemas.ts';

// The wire shapes of the hosted Cognitive API ("cognitive v2") and of the `llm` interface (11.0.0), as
// the official clients send and read them. The request is lenient on purpose: `@botpress/cognitive`
// 0.5.4 sends the legacy `generateContent` input to v2 unchanged, and `@botpress/zai` adds fields of
// its own (`signal`, `meta`), so both shapes are accepted and undeclared fields are ignored.

/** Longest model reference, and most references of a fallback array. */
export const MODEL_REF_MAX_LENGTH = 200;
export const MODEL_FALLBACKS_MAX = 8;
/** Most messages and tools of one request. */
export const MESSAGES_MAX = 1_000;
export const TOOLS_MAX = 128;

const ModelRef = Type.String({ minLength: 1, maxLength: MODEL_REF_MAX_LENGTH });

const ContentPart = Type.Object({
  type: Type.String({ description: '`text`, `image` or `audio`' }),
  text: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  mimeType: Type.Optional(Type.String()),
});
export type ContentPart = Static<typeof ContentPart>;

/** A tool call as v2 writes it (`name`, `input`) or as the `llm` interface does (`function.arguments`). */
const ToolCallIn = Type.Object({
  id: Type.String(),
  name: Type.Optional(Type.String()),
  input: Type.Optional(Type.Unknown()),
  type: Type.Optional(Type.String()),
  function: Type.Optional(
    Type.Object({ name: Type.String(), arguments: Type.Optional(Type.Union([Type.Unknown(), Type.Null()])) }),
  ),
});
export type ToolCallIn = Static<typeof ToolCallIn>;

export const MessageSchema = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]),
  content: Type.Union([Type.String(), Type.Array(ContentPart), Type.Null()]),
  type: Type.Optional(Type.String()),
  toolCalls: Type.Optional(Type.Array(ToolCallIn)),
  toolResultCallId: Type.Optional(Type.String()),
});
export type Message = Static<typeof MessageSchema>;

/** A tool as v2 declares it (`name`, `parameters`) or as the `llm` interface does (`function`). */
const ToolIn = Type.Object({
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(JsonObject),
  strict: Type.Optional(Type.Boolean()),
  type: Type.Optional(Type.String()),
  function: Type.Optional(
    Type.Object({
      name: Type.String(),
      description: Type.Optional(Type.String()),
      argumentsSchema: Type.Optional(JsonObject),
    }),
  ),
});
export type ToolIn = Static<typeof ToolIn>;

export const GenerationOptions = Type.Object({
  debug: Type.Optional(Type.Boolean()),
  skipCache: Type.Optional(Type.Boolean()),
  requestId: Type.Optional(Type.String({ maxLength: 200, description: 'An idempotency key.' })),
  maxTimeToFirstToken: Type.Optional(Type.Number({ minimum: 0 })),
});

const Meta = Type.Object({
  promptSource: Type.Optional(Type.String()),
  promptCategory: Type.Optional(Type.String()),
  integrationName: Type.Optional(Type.String()),
});

/** Every field of a generation request: the v2 `CognitiveRequest` and the legacy `GenerateContentInput`. */
export const GenerationRequestFields = {
  messages: Type.Array(MessageSchema, { maxItems: MESSAGES_MAX }),
  model: Type.Optional(
    Type.Union([
      ModelRef,
      Type.Array(ModelRef, { minItems: 1, maxItems: MODEL_FALLBACKS_MAX }),
      Type.Object({ id: ModelRef }),
    ]),
  ),
  systemPrompt: Type.Optional(Type.String()),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  maxTokens: Type.Optional(Type.Integer({ minimum: 1 })),
  stopSequences: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 16 })])),
  stream: Type.Optional(Type.Boolean()),
  responseFormat: Type.Optional(
    Type.Union([Type.Literal('text'), Type.Literal('json'), Type.Literal('json_object')]),
  ),
  reasoningEffort: Type.Optional(Type.String()),
  search: Type.Optional(Type.Unknown()),
  tools: Type.Optional(Type.Array(ToolIn, { maxItems: TOOLS_MAX })),
  toolControl: Type.Optional(
    Type.Object({
      mode: Type.Optional(Type.String()),
      toolName: Type.Optional(Type.String()),
      parallel: Type.Optional(Type.Boolean()),
    }),
  ),
  toolChoice: Type.Optional(
    Type.Object({ type: Type.Optional(Type.String()), functionName: Type.Optional(Type.String()) }),
  ),
  userId: Type.Optional(Type.String()),
  debug: Type.Optional(Type.Boolean()),
  options: Type.Optional(GenerationOptions),
  meta: Type.Optional(Meta),
};
export type GenerationRequest = Static<ReturnType<typeof Type.Object<typeof GenerationRequestFields>>>;

export const WARNING_TYPES = [
  'parameter_ignored',
  'provider_limitation',
  'deprecated_model',
  'discontinued_model',
  'fallback_used',
  'timeout',
] as const;
export type WarningType = (typeof WARNING_TYPES)[number];
const Warning = Type.Object({
  type: Type.Enum(WARNING_TYPES),
  message: Type.String(),
});
export type Warning = Static<typeof Warning>;

export const STOP_REASONS = ['stop', 'max_tokens', 'tool_calls', 'content_filter', 'other'] as const;
export type StopReason = (typeof STOP_REASONS)[number];
const StopReasonSchema = Type.Enum(STOP_REASONS);

const Usage = Type.Object({
  inputTokens: Type.Integer(),
  inputCost: Type.Number(),
  outputTokens: Type.Integer(),
  outputCost: Type.Number(),
});
export type Usage = Static<typeof Usage>;

export const GenerationMetadataSchema = Type.Object({
  requestId: Type.Optional(Type.String()),
  provider: Type.String(),
  model: Type.Optional(Type.String()),
  usage: Usage,
  cost: Type.Number(),
  cached: Type.Optional(Type.Boolean()),
  latency: Type.Optional(Type.Number()),
  ttft: Type.Optional(Type.Number()),
  stopReason: Type.Optional(StopReasonSchema),
  warnings: Type.Optional(Type.Array(Warning)),
  fallbackPath: Type.Optional(Type.Array(Type.String())),
});
export type GenerationMetadata = Static<typeof GenerationMetadataSchema>;

const ToolCallOut = Type.Object({ id: Type.String(), name: Type.String(), input: JsonObject });
export type ToolCallOut = Static<typeof ToolCallOut>;

export const GenerationResponseSchema = Type.Object({
  output: Type.String(),
  reasoning: Type.Optional(Type.String()),
  toolCalls: Type.Optional(Type.Array(ToolCallOut)),
  metadata: GenerationMetadataSchema,
});
export type GenerationResponse = Static<typeof GenerationResponseSchema>;

/** One NDJSON line of `generate-text-stream`: the last carries `finished` and `metadata`. */
export const GenerationChunkSchema = Type.Object({
  output: Type.Optional(Type.String()),
  reasoning: Type.Optional(Type.String()),
  toolCalls: Type.Optional(Type.Array(ToolCallOut)),
  created: Type.Number(),
  finished: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(GenerationMetadataSchema),
});
export type GenerationChunk = Static<typeof GenerationChunkSchema>;

const Limits = Type.Object({ maxTokens: Type.Integer(), costPer1MTokens: Type.Number() });
export const LIFECYCLES = ['production', 'preview', 'deprecated', 'discontinued'] as const;
export const ModelSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  aliases: Type.Optional(Type.Array(Type.String())),
  tags: Type.Array(Type.String()),
  input: Limits,
  output: Limits,
  lifecycle: Type.Enum(LIFECYCLES),
  capabilities: Type.Optional(
    Type.Object({
      supportsImages: Type.Boolean(),
      supportsAudio: Type.Boolean(),
      supportsTranscription: Type.Boolean(),
      supportsSearch: Type.Boolean(),
    }),
  ),
});
export type Model = Static<typeof ModelSchema>;

/**
 * The largest audio `transcribe-audio` takes, read from a URL or a data URI: OpenAI's own limit of an
 * upload to `/audio/transcriptions`.
 */
export const AUDIO_MAX_BYTES = 25 * 1024 * 1024;
/** A data URI of that much audio, in base64, with room for its header. */
export const AUDIO_URL_MAX_LENGTH = Math.ceil(AUDIO_MAX_BYTES / 3) * 4 + 1024;

/** The body of `transcribe-audio`, as the hosted `TranscribeRequest`. */
export const TranscriptionRequestFields = {
  url: Type.String({
    minLength: 1,
    maxLength: AUDIO_URL_MAX_LENGTH,
    description:
      'The audio: an http(s) URL (a file of the Files API, or any public address) or a `data:` URI in base64.',
  }),
  mimeType: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'The audio’s type; else the URL’s answer or extension says.',
    }),
  ),
  model: Type.Optional(
    Type.Union([ModelRef, Type.Array(ModelRef, { minItems: 1, maxItems: MODEL_FALLBACKS_MAX })]),
  ),
  options: Type.Optional(GenerationOptions),
};
export type TranscriptionRequest = Static<ReturnType<typeof Type.Object<typeof TranscriptionRequestFields>>>;

export const TranscriptionMetadataSchema = Type.Object({
  requestId: Type.Optional(Type.String()),
  provider: Type.String(),
  model: Type.String(),
  cost: Type.Number(),
  durationSeconds: Type.Number(),
  latency: Type.Optional(Type.Number()),
  cached: Type.Optional(Type.Boolean()),
  fallbackPath: Type.Optional(Type.Array(Type.String())),
});
export type TranscriptionMetadata = Static<typeof TranscriptionMetadataSchema>;

export const TranscriptionResponseSchema = Type.Object({
  output: Type.String(),
  metadata: TranscriptionMetadataSchema,
});
export type TranscriptionResponse = Static<typeof TranscriptionResponseSchema>;
