import { invalidPayload } from '../shared/errors.ts';
import type {
  ChatCompletionBody,
  OpenAiContentPart,
  OpenAiMessage,
  OpenAiTool,
  OpenAiToolCall,
  OpenAiToolChoice,
} from './openai-wire.ts';
import type { ContentPart, GenerationRequest, Message, ToolCallIn, ToolIn, Warning } from './schemas.ts';

/** A request in the provider's terms, with what it could not carry over. */
export interface ProviderRequest {
  /** Everything but the model, which each attempt of a fallback array sets. */
  body: Omit<ChatCompletionBody, 'model'>;
  warnings: Warning[];
}

const ignored = (message: string): Warning => ({ type: 'parameter_ignored', message });

/**
 * The chat-completions request for a generation request of either shape (v2 or the `llm` interface's).
 * What OpenAI-compatible servers do not take the same way everywhere (`reasoningEffort`, `search`) is
 * left out and reported, so that the caller learns it was not honoured.
 */
export function toProviderRequest(request: GenerationRequest): ProviderRequest {
  const warnings: Warning[] = [];
  const messages: OpenAiMessage[] = [];
  if (request.systemPrompt) messages.push({ role: 'system', content: request.systemPrompt });
  request.messages.forEach((message, i) => messages.push(toMessage(message, i, warnings)));
  if (messages.length === 0) throw invalidPayload('messages must have at least one message');
  const body: Omit<ChatCompletionBody, 'model'> = { messages };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  const stop = typeof request.stopSequences === 'string' ? [request.stopSequences] : request.stopSequences;
  if (stop && stop.length > 0) body.stop = stop;
  if (request.responseFormat === 'json' || request.responseFormat === 'json_object') {
    body.response_format = { type: 'json_object' };
  }
  if (request.userId) body.user = request.userId;
  const tools = request.tools?.map(toTool) ?? [];
  if (tools.length > 0) {
    body.tools = tools;
    const choice = toolChoice(request);
    if (choice) body.tool_choice = choice;
    if (request.toolControl?.parallel !== undefined) body.parallel_tool_calls = request.toolControl.parallel;
  }
  if (request.reasoningEffort && request.reasoningEffort !== 'none') {
    warnings.push(ignored('reasoningEffort is not sent to OpenAI-compatible providers, which differ on it'));
  }
  if (request.search !== undefined && request.search !== false) {
    warnings.push(ignored('search is not offered by this server’s providers'));
  }
  return { body, warnings };
}

function text(content: Message['content']): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .flatMap((part) => (part.type === 'text' && part.text !== undefined ? [part.text] : []))
    .join('\n');
}

function toParts(parts: ContentPart[], at: number, warnings: Warning[]): OpenAiContentPart[] {
  return parts.flatMap((part, j): OpenAiContentPart[] => {
    if (part.type === 'text') return [{ type: 'text', text: part.text ?? '' }];
    if (part.type === 'image' && part.url) return [{ type: 'image_url', image_url: { url: part.url } }];
    warnings.push(
      ignored(`messages/${at}/content/${j}: a part of type "${part.type}" is not sent to the provider`),
    );
    return [];
  });
}

function toMessage(message: Message, at: number, warnings: Warning[]): OpenAiMessage {
  if (message.role === 'system') return { role: 'system', content: text(message.content) };
  if (message.toolResultCallId !== undefined || message.type === 'tool_result') {
    if (!message.toolResultCallId)
      throw invalidPayload(`messages/${at}/toolResultCallId is required for a tool result`);
    return { role: 'tool', tool_call_id: message.toolResultCallId, content: text(message.content) };
  }
  if (message.role === 'assistant') {
    const calls =
      message.toolCalls?.map((call, j) => toToolCall(call, `messages/${at}/toolCalls/${j}`)) ?? [];
    return {
      role: 'assistant',
      content: text(message.content) || null,
      ...(calls.length > 0 && { tool_calls: calls }),
    };
  }
  const { content } = message;
  if (Array.isArray(content) && content.some((part) => part.type !== 'text')) {
    return { role: 'user', content: toParts(content, at, warnings) };
  }
  return { role: 'user', content: text(content) };
}

function toToolCall(call: ToolCallIn, at: string): OpenAiToolCall {
  const name = call.function?.name ?? call.name;
  if (!name) throw invalidPayload(`${at}/name is required`);
  const args = call.function ? call.function.arguments : call.input;
  return {
    id: call.id,
    type: 'function',
    function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
  };
}

function toTool(tool: ToolIn, i: number): OpenAiTool {
  const name = tool.function?.name ?? tool.name;
  if (!name) throw invalidPayload(`tools/${i}/name is required`);
  const description = tool.function?.description ?? tool.description;
  const parameters = tool.function?.argumentsSchema ?? tool.parameters;
  return {
    type: 'function',
    function: {
      name,
      ...(description !== undefined && { description }),
      ...(parameters !== undefined && { parameters }),
      ...(tool.strict !== undefined && { strict: tool.strict }),
    },
  };
}

/** v2's `toolControl` (`auto|none|required|specific`), else the interface's `toolChoice` (`any` is required). */
function toolChoice(request: GenerationRequest): OpenAiToolChoice | undefined {
  const mode = request.toolControl?.mode ?? request.toolChoice?.type;
  const name = request.toolControl?.toolName ?? request.toolChoice?.functionName;
  switch (mode) {
    case 'auto':
    case 'none':
    case 'required':
      return mode;
    case 'any':
      return 'required';
    case 'specific':
      if (!name) throw invalidPayload('toolControl/toolName is required with the mode "specific"');
      return { type: 'function', function: { name } };
    default:
      return undefined;
  }
}
