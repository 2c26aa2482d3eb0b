// The OpenAI chat-completions request as the gateway writes it (answers are read field by field): what any
// OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp's server, LiteLLM) understands.

export type OpenAiContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }
  | { type: 'input_audio'; input_audio: { data: string; format: string } };

export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type OpenAiMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | OpenAiContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAiToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface OpenAiTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type OpenAiToolChoice =
  'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export interface ChatCompletionBody {
  model: string;
  messages: OpenAiMessage[];
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  stop?: string[];
  response_format?: { type: 'json_object' | 'text' };
  tools?: OpenAiTool[];
  tool_choice?: OpenAiToolChoice;
  parallel_tool_calls?: boolean;
  reasoning_effort?: string;
  user?: string;
  stream?: boolean;
  stream_options?: { include_usage: boolean };
}
