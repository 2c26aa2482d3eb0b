// `POST /v1/chat/completions` of the test model server: the completion in OpenAI's shape, whole or as
// server-sent events (one chunk per token, paced, stopping when the client leaves).
import type { Exchange } from './model-exchange.ts';
import { completionTokens, complete, promptTokens } from './model-replies.ts';
import type { Completion, ScriptedReply } from './model-replies.ts';
import { InvalidRequest, readChatCall } from './model-request.ts';
import type { ChatCall } from './model-request.ts';
import { tokenPieces } from './model-tokens.ts';

/** How a stream is paced: the wait before the first token, and between two tokens. */
export interface Pacing {
  firstTokenDelayMs: number;
  tokenDelayMs: number;
}

/** What the route needs from the server: the script of replies, the call numbers, the pacing. */
export interface ChatScript {
  /** The reply scripted for this call, if any (taking it when it is for one call only). */
  replyFor(call: ChatCall): ScriptedReply | undefined;
  /** A new number for this call: it makes the completion's id and its tool call ids. */
  nextCallId(): number;
  pacing(): Pacing;
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export async function answerChatCompletion(exchange: Exchange, script: ChatScript): Promise<void> {
  let call: ChatCall;
  try {
    call = readChatCall(exchange.record.body);
  } catch (err) {
    if (!(err instanceof InvalidRequest)) throw err;
    exchange.sendError(400, { message: err.message, type: 'invalid_request_error', param: err.param });
    return;
  }
  const callId = script.nextCallId();
  const completion = complete(call, script.replyFor(call), callId);
  const prompt = promptTokens(call);
  const generated = completionTokens(completion);
  const usage = { prompt_tokens: prompt, completion_tokens: generated, total_tokens: prompt + generated };
  const head = { id: `chatcmpl-${callId}`, created: Math.floor(Date.now() / 1000), model: call.model };
  if (call.stream) {
    await streamCompletion(exchange, { ...head, object: 'chat.completion.chunk' }, completion, {
      usage: call.includeUsage ? usage : undefined,
      pacing: script.pacing(),
    });
    return;
  }
  exchange.sendJson(200, {
    ...head,
    object: 'chat.completion',
    choices: [
      { index: 0, message: messageOf(completion), logprobs: null, finish_reason: completion.finishReason },
    ],
    usage,
  });
}

function messageOf(completion: Completion): Record<string, unknown> {
  switch (completion.kind) {
    case 'text':
      return { role: 'assistant', content: completion.text, refusal: null };
    case 'refusal':
      return { role: 'assistant', content: null, refusal: completion.refusal };
    case 'tool_calls':
      return {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: completion.toolCalls.map((toolCall) => ({
          id: toolCall.id,
          type: 'function',
          function: { name: toolCall.name, arguments: toolCall.arguments },
        })),
      };
  }
}

/** The deltas that make up the completion, one per token (a tool call's first delta names it). */
function deltasOf(completion: Completion): Record<string, unknown>[] {
  switch (completion.kind) {
    case 'text':
      return tokenPieces(completion.text).map((content) => ({ content }));
    case 'refusal':
      return tokenPieces(completion.refusal).map((refusal) => ({ refusal }));
    case 'tool_calls':
      return completion.toolCalls.flatMap((toolCall, index) => [
        {
          tool_calls: [
            { index, id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: '' } },
          ],
        },
        ...tokenPieces(toolCall.arguments).map((piece) => ({
          tool_calls: [{ index, function: { arguments: piece } }],
        })),
      ]);
  }
}

/**
 * Sends the completion as OpenAI's stream: a first chunk with the role, a chunk per token, a chunk with
 * the finish reason, the usage chunk (`choices: []`) when asked, then `data: [DONE]`.
 */
async function streamCompletion(
  exchange: Exchange,
  head: Record<string, unknown>,
  completion: Completion,
  { usage, pacing }: { usage: Usage | undefined; pacing: Pacing },
): Promise<void> {
  const { response } = exchange;
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.flushHeaders();
  response.socket?.setNoDelay(true);
  // With `include_usage`, every chunk carries `usage: null` but the last.
  const chunk = (choices: unknown[]) => ({ ...head, choices, ...(usage && { usage: null }) });
  const choice = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finishReason,
  });
  const send = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);

  await exchange.pause(pacing.firstTokenDelayMs);
  if (exchange.gone) return;
  send(chunk([choice({ role: 'assistant', content: '' })]));
  const deltas = deltasOf(completion);
  for (const [index, delta] of deltas.entries()) {
    if (index > 0) await exchange.pause(pacing.tokenDelayMs);
    if (exchange.gone) return;
    if (index === exchange.cutAfterChunks) {
      exchange.cut();
      return;
    }
    send(chunk([choice(delta)]));
  }
  send(chunk([choice({}, completion.finishReason)]));
  if (usage) send({ ...head, choices: [], usage });
  response.end('data: [DONE]\n\n');
}
