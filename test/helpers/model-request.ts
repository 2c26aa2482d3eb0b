// What the test model server reads from a `POST /v1/chat/completions` body: OpenAI's request shape,
// checked as strictly as OpenAI checks what a gateway could get wrong (a wrong type, `stream_options`
// without `stream`, `tool_choice` without `tools`), and lenient about the rest (`n`, `top_p`, `user`…
// are accepted and ignored).

/** A request the server refuses with 400 and OpenAI's `invalid_request_error`, naming the parameter. */
export class InvalidRequest extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them: a JSON text. */
  arguments: string;
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  /** The text of the content: the string, or the text parts joined by newlines (images left out). */
  text: string;
  toolCalls: ToolCall[];
  /** A tool message's `tool_call_id`. */
  toolCallId?: string;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** The JSON schema of the arguments. */
  parameters?: unknown;
}

export type ToolChoice =
  { mode: 'auto' } | { mode: 'none' } | { mode: 'required' } | { mode: 'function'; name: string };

export type ResponseFormat =
  { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name: string; schema: unknown };

/** A chat completion request, read. */
export interface ChatCall {
  model: string;
  messages: ChatMessage[];
  /** The text of the last user message ('' when there is none). */
  lastUserText: string;
  /** `max_completion_tokens`, else `max_tokens`. */
  maxTokens?: number;
  temperature?: number;
  /** `stop`, always as a list. */
  stop: string[];
  stream: boolean;
  /** `stream_options.include_usage`. */
  includeUsage: boolean;
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
  responseFormat: ResponseFormat;
  /** Accepted and ignored, as by models that do not reason. */
  reasoningEffort?: string;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

function isRole(value: unknown): value is ChatMessage['role'] {
  return ROLES.some((role) => role === value);
}

export function readChatCall(body: unknown): ChatCall {
  if (!isRecord(body)) throw new InvalidRequest('The body must be a JSON object.', 'body');
  const model = body.model;
  if (typeof model !== 'string' || model === '') {
    throw new InvalidRequest('you must provide a model parameter', 'model');
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new InvalidRequest("'messages' must be a non-empty array.", 'messages');
  }
  const messages = body.messages.map((message, index) => readMessage(message, `messages[${index}]`));
  const stream = readOptional(body, 'stream', 'boolean') ?? false;
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null && !stream) {
    throw new InvalidRequest(
      'The stream_options parameter is only allowed when stream is enabled.',
      'stream_options',
    );
  }
  const tools = readTools(body.tools);
  const temperature = readOptional(body, 'temperature', 'number');
  if (temperature !== undefined && (temperature < 0 || temperature > 2)) {
    throw new InvalidRequest('temperature must be between 0 and 2.', 'temperature');
  }
  const maxTokens = readMaxTokens(body, 'max_completion_tokens') ?? readMaxTokens(body, 'max_tokens');
  const reasoningEffort = readOptional(body, 'reasoning_effort', 'string');
  return {
    model,
    messages,
    lastUserText: messages.findLast((m) => m.role === 'user')?.text ?? '',
    ...(maxTokens !== undefined && { maxTokens }),
    ...(temperature !== undefined && { temperature }),
    stop: readStop(body.stop),
    stream,
    includeUsage: isRecord(streamOptions) && streamOptions.include_usage === true,
    tools,
    toolChoice: readToolChoice(body.tool_choice, tools),
    responseFormat: readResponseFormat(body.response_format),
    ...(reasoningEffort !== undefined && { reasoningEffort }),
  };
}

function readOptional(body: Record<string, unknown>, name: string, type: 'boolean'): boolean | undefined;
function readOptional(body: Record<string, unknown>, name: string, type: 'number'): number | undefined;
function readOptional(body: Record<string, unknown>, name: string, type: 'string'): string | undefined;
function readOptional(
  body: Record<string, unknown>,
  name: string,
  type: 'boolean' | 'number' | 'string',
): unknown {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type) throw new InvalidRequest(`'${name}' must be a ${type}.`, name);
  return value;
}

function readMaxTokens(body: Record<string, unknown>, name: string): number | undefined {
  const value = readOptional(body, name, 'number');
  if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
    throw new InvalidRequest(`'${name}' must be a positive integer.`, name);
  }
  return value;
}

function readMessage(value: unknown, param: string): ChatMessage {
  if (!isRecord(value) || !isRole(value.role)) {
    throw new InvalidRequest(`${param} must be an object with a role of ${ROLES.join(', ')}.`, param);
  }
  const toolCallId = value.tool_call_id;
  if (value.role === 'tool' && typeof toolCallId !== 'string') {
    throw new InvalidRequest(`${param}.tool_call_id is required for a tool message.`, param);
  }
  return {
    role: value.role,
    text: readContent(value.content, `${param}.content`),
    toolCalls: readMessageToolCalls(value.tool_calls, `${param}.tool_calls`),
    ...(typeof toolCallId === 'string' && { toolCallId }),
  };
}

function readContent(content: unknown, param: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new InvalidRequest(`${param} must be a string or an array.`, param);
  return content
    .map((part, index) => {
      if (!isRecord(part) || typeof part.type !== 'string') {
        throw new InvalidRequest(`${param}[${index}] must be a content part with a type.`, param);
      }
      return part.type === 'text' && typeof part.text === 'string' ? part.text : undefined;
    })
    .filter((text) => text !== undefined)
    .join('\n');
}

function readMessageToolCalls(value: unknown, param: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidRequest(`${param} must be an array.`, param);
  return value.map((call, index) => {
    const fn = isRecord(call) ? call.function : undefined;
    if (!isRecord(call) || typeof call.id !== 'string' || !isRecord(fn) || typeof fn.name !== 'string') {
      throw new InvalidRequest(`${param}[${index}] must have an id and a function name.`, param);
    }
    return { id: call.id, name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '' };
  });
}

function readStop(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((stop) => typeof stop === 'string')) return value;
  throw new InvalidRequest("'stop' must be a string or an array of strings.", 'stop');
}

function readTools(value: unknown): ToolDefinition[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidRequest("'tools' must be an array.", 'tools');
  return value.map((tool, index) => {
    const fn = isRecord(tool) ? tool.function : undefined;
    if (!isRecord(tool) || tool.type !== 'function' || !isRecord(fn) || typeof fn.name !== 'string') {
      throw new InvalidRequest(`tools[${index}] must be { type: 'function', function: { name } }.`, 'tools');
    }
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' && { description: fn.description }),
      ...(fn.parameters !== undefined && { parameters: fn.parameters }),
    };
  });
}

function readToolChoice(value: unknown, tools: ToolDefinition[]): ToolChoice {
  if (value === undefined || value === null) return { mode: 'auto' };
  if (tools.length === 0) {
    throw new InvalidRequest('tool_choice is only allowed when tools are specified.', 'tool_choice');
  }
  if (value === 'auto' || value === 'none' || value === 'required') return { mode: value };
  const fn = isRecord(value) ? value.function : undefined;
  if (isRecord(value) && value.type === 'function' && isRecord(fn) && typeof fn.name === 'string') {
    const name = fn.name;
    if (!tools.some((tool) => tool.name === name)) {
      throw new InvalidRequest(`tool_choice names ${name}, which is not among the tools.`, 'tool_choice');
    }
    return { mode: 'function', name };
  }
  throw new InvalidRequest(
    "tool_choice must be 'auto', 'none', 'required' or { type: 'function', function: { name } }.",
    'tool_choice',
  );
}

function readResponseFormat(value: unknown): ResponseFormat {
  if (value === undefined || value === null) return { type: 'text' };
  if (isRecord(value)) {
    if (value.type === 'text' || value.type === 'json_object') return { type: value.type };
    const spec = value.json_schema;
    if (value.type === 'json_schema' && isRecord(spec) && typeof spec.name === 'string') {
      return { type: 'json_schema', name: spec.name, schema: spec.schema ?? {} };
    }
  }
  throw new InvalidRequest(
    "response_format must be { type: 'text' | 'json_object' } or { type: 'json_schema', json_schema: { name, schema } }.",
    'response_format',
  );
}
