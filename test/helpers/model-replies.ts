// What the test model "generates" for a chat completion: a scripted reply, or by default a function of
// the request, then cut as a model would be by `stop` and `max_tokens`.
//
// Without a script the reply is:
// - a call of the tool `tool_choice` names (or of the first tool, for `required`), with arguments that
//   fit the tool's parameter schema (see `valueFitting`);
// - for `response_format` `json_schema`, the JSON text of a value that fits the schema; for `json_object`, `{}`;
// - else `echo: <the last user message's text>`.
import { isRecord } from './model-request.ts';
import type { ChatCall, ToolCall } from './model-request.ts';
import { countTokens, firstTokens } from './model-tokens.ts';

/**
 * A reply a test scripts: a text (a string is short for `{ text }`); a value whose JSON is the text;
 * tool calls (arguments given as a value are written as JSON, a string is sent as it is); a refusal.
 */
export type ScriptedReply =
  | string
  | { text: string }
  | { json: unknown }
  | { toolCalls: { name: string; arguments?: unknown }[] }
  | { refusal: string };

/** Which calls a scripted reply answers: a text the last user message contains, a pattern it matches, or a test of the request. */
export type ReplyMatcher = string | RegExp | ((call: ChatCall) => boolean);

export type FinishReason = 'stop' | 'length' | 'tool_calls';

/** What the model answers, before it is put in OpenAI's shape (whole, or in chunks). */
export type Completion =
  | { kind: 'text'; text: string; finishReason: FinishReason }
  | { kind: 'tool_calls'; toolCalls: ToolCall[]; finishReason: FinishReason }
  | { kind: 'refusal'; refusal: string; finishReason: FinishReason };

export function matches(matcher: ReplyMatcher, call: ChatCall): boolean {
  if (typeof matcher === 'string') return call.lastUserText.includes(matcher);
  if (matcher instanceof RegExp) return matcher.test(call.lastUserText);
  return matcher(call);
}

/** The completion of `call`, `scripted` or by default; `callId` makes the tool call ids (`call_<callId>_<n>`). */
export function complete(call: ChatCall, scripted: ScriptedReply | undefined, callId: number): Completion {
  const reply = scripted ?? defaultReply(call);
  if (typeof reply === 'string') return cut(call, reply);
  if ('text' in reply) return cut(call, reply.text);
  if ('json' in reply) return cut(call, JSON.stringify(reply.json));
  if ('refusal' in reply) return { kind: 'refusal', refusal: reply.refusal, finishReason: 'stop' };
  return {
    kind: 'tool_calls',
    toolCalls: reply.toolCalls.map((toolCall, index) => ({
      id: `call_${callId}_${index}`,
      name: toolCall.name,
      arguments:
        typeof toolCall.arguments === 'string'
          ? toolCall.arguments
          : JSON.stringify(toolCall.arguments ?? {}),
    })),
    finishReason: 'tool_calls',
  };
}

/** The tokens the completion counts for in `usage.completion_tokens`. */
export function completionTokens(completion: Completion): number {
  switch (completion.kind) {
    case 'text':
      return countTokens(completion.text);
    case 'refusal':
      return countTokens(completion.refusal);
    case 'tool_calls':
      return completion.toolCalls.reduce(
        (sum, toolCall) => sum + countTokens(toolCall.name) + countTokens(toolCall.arguments),
        0,
      );
  }
}

/** The tokens of the prompt: every message's text, and the names and arguments of its tool calls. */
export function promptTokens(call: ChatCall): number {
  return call.messages.reduce(
    (sum, message) =>
      sum +
      countTokens(message.text) +
      message.toolCalls.reduce((calls, t) => calls + countTokens(t.name) + countTokens(t.arguments), 0),
    0,
  );
}

function defaultReply(call: ChatCall): ScriptedReply {
  const choice = call.toolChoice;
  const toolName =
    choice.mode === 'function' ? choice.name : choice.mode === 'required' ? call.tools[0]?.name : undefined;
  const tool = call.tools.find((t) => t.name === toolName);
  if (tool) return { toolCalls: [{ name: tool.name, arguments: valueFitting(tool.parameters ?? {}) }] };
  const format = call.responseFormat;
  if (format.type === 'json_schema') return { json: valueFitting(format.schema) };
  if (format.type === 'json_object') return { json: {} };
  return `echo: ${call.lastUserText}`;
}

/** The text cut before the first stop sequence (finish `stop`), then to `max_tokens` (finish `length`). */
function cut(call: ChatCall, text: string): Completion {
  const stopAt = Math.min(...call.stop.map((stop) => text.indexOf(stop)).filter((at) => at !== -1));
  const stopped = Number.isFinite(stopAt) ? text.slice(0, stopAt) : text;
  if (call.maxTokens !== undefined && countTokens(stopped) > call.maxTokens) {
    return { kind: 'text', text: firstTokens(stopped, call.maxTokens), finishReason: 'length' };
  }
  return { kind: 'text', text: stopped, finishReason: 'stop' };
}

/**
 * The least value that fits a JSON schema: its `const`, its first `enum` value, the first of
 * `anyOf`/`oneOf`, else by type `''`, `0`, `false`, `null`, `[]` (or `minItems` fitting items), or an
 * object with its required properties (each fitting its own schema) and no others.
 */
export function valueFitting(schema: unknown): unknown {
  if (!isRecord(schema)) return {};
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives) && alternatives.length > 0) return valueFitting(alternatives[0]);
  const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t !== 'null') ?? types[0];
  switch (type) {
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const count = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: count }, () => valueFitting(schema.items ?? {}));
    }
    default: {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required : [];
      return Object.fromEntries(
        required
          .filter((name) => typeof name === 'string')
          .map((name) => [name, valueFitting(properties[name] ?? {})]),
      );
    }
  }
}
