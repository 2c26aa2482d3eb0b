import { fromJson, isJsonObject } from '../shared/json.ts';
import type { Json, JsonObject } from '../shared/json.ts';
import { isObject } from './openai-compatible.ts';
import type { Answer } from './openai-compatible.ts';
import type { StopReason, ToolCallOut, Warning } from './schemas.ts';

/** A provider's completion, read. */
export interface Completion {
  text: string;
  reasoning: string;
  toolCalls: ToolCallOut[];
  stopReason: StopReason;
  /** Undefined when the provider did not count them. */
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  warnings: Warning[];
}

const FINISH_REASONS: Partial<Record<string, StopReason>> = {
  stop: 'stop',
  length: 'max_tokens',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

function stopReasonOf(finish: unknown): StopReason {
  // Own keys only: a finish reason like `constructor` must not read what every object inherits.
  if (typeof finish !== 'string' || !Object.hasOwn(FINISH_REASONS, finish)) return 'other';
  return FINISH_REASONS[finish] ?? 'other';
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

function firstChoice(answer: Answer): Answer {
  const choices: unknown = answer.choices;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  return isObject(first) ? first : {};
}

/** A tool call's arguments as an object; what does not parse as one is reported, and answered as `{}`. */
function toolInput(args: string, name: string, warnings: Warning[]): JsonObject {
  try {
    const parsed = fromJson<Json>(args === '' ? '{}' : args);
    if (isJsonObject(parsed)) return parsed;
  } catch {
    // reported below
  }
  warnings.push({
    type: 'provider_limitation',
    message: `The provider's arguments for the tool "${name}" are not a JSON object; they were replaced by {}`,
  });
  return {};
}

function usageOf(answer: Answer): { inputTokens: number | undefined; outputTokens: number | undefined } {
  const usage = isObject(answer.usage) ? answer.usage : {};
  return { inputTokens: count(usage.prompt_tokens), outputTokens: count(usage.completion_tokens) };
}

/** A whole (not streamed) chat completion, read. */
export function readCompletion(answer: Answer): Completion {
  const choice = firstChoice(answer);
  const message = isObject(choice.message) ? choice.message : {};
  const warnings: Warning[] = [];
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const toolCalls = calls.flatMap((call, i): ToolCallOut[] => {
    if (!isObject(call) || !isObject(call.function)) return [];
    const name = str(call.function.name);
    const id = str(call.id) || `call_${i}`;
    return [{ id, name, input: toolInput(str(call.function.arguments), name, warnings) }];
  });
  return {
    text: str(message.content),
    reasoning: str(message.reasoning_content) || str(message.reasoning),
    toolCalls,
    stopReason: stopReasonOf(choice.finish_reason),
    ...usageOf(answer),
    warnings,
  };
}

/** The pieces of a streamed completion, put together as they arrive. */
export class StreamedCompletion {
  private text = '';
  private reasoning = '';
  private finish: unknown;
  private usage: { inputTokens: number | undefined; outputTokens: number | undefined } = {
    inputTokens: undefined,
    outputTokens: undefined,
  };
  /** Tool calls by their index in the stream: their arguments arrive in pieces. */
  private readonly calls = new Map<number, { id: string; name: string; args: string }>();

  /** Takes one event; answers the text and reasoning it adds. */
  add(chunk: Answer): { output: string; reasoning: string } {
    if (isObject(chunk.usage)) this.usage = usageOf(chunk);
    const choice = firstChoice(chunk);
    if (choice.finish_reason !== undefined && choice.finish_reason !== null)
      this.finish = choice.finish_reason;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const output = str(delta.content);
    const reasoning = str(delta.reasoning_content) || str(delta.reasoning);
    this.text += output;
    this.reasoning += reasoning;
    const calls = Array.isArray(delta.tool_calls) ? delta.tool_calls : [];
    calls.forEach((call, position) => {
      if (!isObject(call)) return;
      const index = count(call.index) ?? position;
      const known = this.calls.get(index) ?? { id: '', name: '', args: '' };
      const fn = isObject(call.function) ? call.function : {};
      this.calls.set(index, {
        id: known.id || str(call.id),
        name: known.name || str(fn.name),
        args: known.args + str(fn.arguments),
      });
    });
    return { output, reasoning };
  }

  /** The whole completion, once the stream ended. */
  done(): Completion {
    const warnings: Warning[] = [];
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({
        id: call.id || `call_${index}`,
        name: call.name,
        input: toolInput(call.args, call.name, warnings),
      }));
    return {
      text: this.text,
      reasoning: this.reasoning,
      toolCalls,
      stopReason: stopReasonOf(this.finish),
      ...this.usage,
      warnings,
    };
  }
}
