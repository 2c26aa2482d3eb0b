import { toolName } from '../package/cards.ts';
import { AUTONOMOUS_LIMITS } from '../package/format.ts';
import type { AutonomousTool, Card } from '../package/format.ts';
import { ApiError } from '../domain/shared/errors.ts';
import { isJsonObject } from '../domain/shared/json.ts';
import type { AutonomousState, Frame } from './dialog-state.ts';
import { DialogError, fileLink, generateText } from './dialog-host.ts';
import type { DialogHost } from './dialog-host.ts';
import { UnitFailure } from './failures.ts';
import type { Json, JsonObject } from './sandbox/types.ts';

type AutonomousCard = Extract<Card, { type: 'autonomous' }>;

/** What the card asks of the dialog when its loop stops for this turn. */
export type AutonomousOutcome =
  { kind: 'wait' } | { kind: 'goto'; node: string } | { kind: 'workflow'; workflow: string };

export interface AutonomousRun {
  host: DialogHost;
  frame: Frame;
  card: AutonomousCard;
  /** A field of the card, its templates rendered. */
  field(name: string, value: Json): Promise<Json>;
}

/** The hosted platform's `meta.promptSource` of an autonomous node's model calls. */
const PROMPT_SOURCE = 'nodes/autonomous';
const LIMIT_MESSAGE = 'Sorry, I could not finish that. Could you put it another way?';
/** What a tool that takes no arguments declares. */
const NO_PARAMETERS: JsonObject = { type: 'object', properties: {}, additionalProperties: false };
const textParameter = (name: string, description: string): JsonObject => ({
  type: 'object',
  properties: { [name]: { type: 'string', description } },
  required: [name],
  additionalProperties: false,
});

interface ToolCall {
  id: string;
  name: string;
  input: JsonObject;
}

/** A tool's answer to the model, or where the loop goes instead. */
type ToolOutcome = { result: Json } | { error: string } | { leave: AutonomousOutcome };

/**
 * The loop of an autonomous card for one turn: the model is called with the conversation so far and the
 * card's tools; each tool it calls is run and its result given back, until it answers with text (sent
 * to the user; the loop waits for the user's next message), a tool waits for the user or goes elsewhere,
 * or the turn's caps stop it. The loop's messages are written after each model answer and each tool
 * result (`saveNow`), so that a turn tried again after a crash goes on from the last of them: a tool
 * that answered is not called again, and a reply it sent is found by its number, not sent again.
 */
export async function runAutonomous(run: AutonomousRun): Promise<AutonomousOutcome> {
  const { host, frame, card } = run;
  const { dialog } = host;
  const state = loopState(host, frame);
  dialog.autonomous = state;
  dialog.waiting = undefined;
  if (state.waiting) return waitForUser(host, state);

  const label = `The autonomous card of node "${frame.node}"`;
  const tools = card.tools.map((tool) => ({ tool, name: toolName(tool) }));
  const definitions = tools.map(({ tool, name }) => definitionOf(host, tool, name));
  const maxIterations = card.maxIterations ?? AUTONOMOUS_LIMITS.maxIterations.default;
  const maxTokens = card.maxTokens ?? AUTONOMOUS_LIMITS.maxTokens.default;
  for (;;) {
    const { answer, calls, pending, answered } = lastAnswer(state.messages);
    if (pending.length > 0) {
      for (const call of pending) {
        const tool = tools.find((t) => t.name === call.name)?.tool;
        const outcome = await runTool(host, `autonomous node "${frame.node}"`, tool, call);
        if ('leave' in outcome) {
          dialog.autonomous = undefined;
          return outcome.leave;
        }
        state.messages.push({
          role: 'user',
          type: 'tool_result',
          toolResultCallId: call.id,
          content: JSON.stringify('error' in outcome ? { error: outcome.error } : outcome.result),
        });
        await host.saveNow();
      }
      continue;
    }
    if (answer && answered) {
      // Every call of the model's last answer has its result: a wait among them ends the turn.
      const types = calls.map((c) => tools.find((t) => t.name === c.name)?.tool.type);
      if (types.includes('waitForUser')) return waitForUser(host, state);
      if (calls.length === 0) {
        // The model's answer: to the user (found, not sent again, when a turn tried again sends it).
        const text = typeof answer.content === 'string' ? answer.content : '';
        if (text.trim() !== '') await host.reply({ type: 'text', text });
        return waitForUser(host, state);
      }
    }

    const cap =
      state.calls >= maxIterations
        ? `${maxIterations} model calls (maxIterations)`
        : state.tokens >= maxTokens
          ? `${maxTokens} tokens (maxTokens)`
          : undefined;
    if (cap !== undefined) return reachedLimit(run, state, cap);

    const instructions = await run.field('instructions', card.instructions);
    const started = Date.now();
    const generated = await generateText(host, label, {
      model: card.model ?? 'best',
      systemPrompt: typeof instructions === 'string' ? instructions : JSON.stringify(instructions),
      messages: state.messages,
      ...(definitions.length > 0 && { tools: definitions }),
      ...(card.temperature !== undefined && { temperature: card.temperature }),
      meta: { promptSource: PROMPT_SOURCE },
    });
    const output = typeof generated.output === 'string' ? generated.output : '';
    const toolCalls = Array.isArray(generated.toolCalls) ? generated.toolCalls.filter(isJsonObject) : [];
    const metadata = isJsonObject(generated.metadata) ? generated.metadata : {};
    const usage = isJsonObject(metadata.usage) ? metadata.usage : {};
    const inputTokens = count(usage.inputTokens);
    const outputTokens = count(usage.outputTokens);
    state.calls++;
    state.tokens += inputTokens + outputTokens;
    state.messages.push({
      role: 'assistant',
      type: 'text',
      content: output,
      ...(toolCalls.length > 0 && { toolCalls }),
    });
    const latency = typeof metadata.latency === 'number' ? metadata.latency : Date.now() - started;
    const model = typeof metadata.model === 'string' ? metadata.model : String(card.model ?? 'best');
    const named = toolCallsOf({ toolCalls }).map((c) => c.name);
    host.log(
      'info',
      `autonomous node "${frame.node}": model call ${state.calls} to ${model}: ${inputTokens} input + ${outputTokens} output tokens (${state.tokens} this turn), ${latency} ms${metadata.cached === true ? ', cached' : ''}; ${named.length > 0 ? `calls ${named.join(', ')}` : 'answers'}`,
      { kind: 'model', durationMs: latency },
    );
    await host.saveNow();
  }
}

/** The card's loop: the one stored for it (its counts started again in a new turn), or a new one. */
function loopState(host: DialogHost, frame: Frame): AutonomousState {
  const eventId = host.dialog.turn?.eventId ?? '';
  const stored = host.dialog.autonomous;
  const text = host.userText();
  const userMessage: JsonObject = { role: 'user', type: 'text', content: text || '(a message without text)' };
  if (
    !stored ||
    stored.recordId !== frame.recordId ||
    stored.node !== frame.node ||
    stored.card !== frame.card
  ) {
    const { recordId, node, card } = frame;
    const messages = text === '' ? [] : [userMessage];
    return { recordId, node, card, messages, eventId, calls: 0, tokens: 0, waiting: false };
  }
  // The same turn, tried again: it goes on from where it was written.
  if (stored.eventId === eventId) return stored;
  return {
    ...stored,
    messages: stored.waiting ? [...stored.messages, userMessage] : stored.messages,
    eventId,
    calls: 0,
    tokens: 0,
    waiting: false,
  };
}

/** Ends the turn; the user's next message goes on with the loop. */
function waitForUser(host: DialogHost, state: AutonomousState): AutonomousOutcome {
  state.waiting = true;
  host.dialog.waiting = { attempts: 0 };
  return { kind: 'wait' };
}

/** A cap stopped the loop: to `onLimit`, or the limit message to the user and a wait for their next one. */
async function reachedLimit(
  run: AutonomousRun,
  state: AutonomousState,
  cap: string,
): Promise<AutonomousOutcome> {
  const { host, frame, card } = run;
  host.log(
    'warn',
    `autonomous node "${frame.node}": the turn reached its cap of ${cap}; ${card.onLimit !== undefined ? `going to node "${card.onLimit}"` : 'the limit message is sent'}`,
  );
  if (card.onLimit !== undefined) {
    host.dialog.autonomous = undefined;
    return { kind: 'goto', node: card.onLimit };
  }
  const message =
    card.limitMessage === undefined ? LIMIT_MESSAGE : await run.field('limitMessage', card.limitMessage);
  if (typeof message === 'string') await host.reply({ type: 'text', text: message });
  else if (isJsonObject(message)) await host.reply(message);
  else throw new DialogError('The limitMessage of an autonomous card must be text or a message');
  state.messages.push({
    role: 'assistant',
    type: 'text',
    content: typeof message === 'string' ? message : JSON.stringify(message),
  });
  return waitForUser(host, state);
}

/** A tool as the model is given it (the Cognitive API's `tools`). */
function definitionOf(host: DialogHost, tool: AutonomousTool, name: string): JsonObject {
  const declared = (description: string, parameters: JsonObject): JsonObject => ({
    name,
    description: tool.description ?? description,
    parameters,
  });
  switch (tool.type) {
    case 'action': {
      const action = host.pkg.actions[tool.action];
      if (!action) throw new DialogError(`No action "${tool.action}" for the tool ${name}`);
      return declared(action.description ?? `The action ${tool.action}`, action.input);
    }
    case 'node':
    case 'workflow':
      return declared(tool.description, NO_PARAMETERS);
    case 'knowledge':
      return declared(
        `Searches the knowledge base ${tool.knowledgeBase}: the passages that best match the query, with their sources`,
        textParameter('query', 'What to look for'),
      );
    case 'sendMessage':
      return declared(
        'Sends a message to the user now, and goes on working',
        textParameter('text', 'The message'),
      );
    case 'waitForUser':
      return declared(
        'Ends your turn: the user’s next message comes back to you with the conversation so far',
        NO_PARAMETERS,
      );
  }
}

/** Runs one tool call of the model; its result, an error for the model, or where the loop goes. */
async function runTool(
  host: DialogHost,
  where: string,
  tool: AutonomousTool | undefined,
  call: ToolCall,
): Promise<ToolOutcome> {
  const started = Date.now();
  const outcome = await toolOutcome(host, tool, call);
  const what = `${where}: tool ${call.name} ${JSON.stringify(call.input)}`;
  const ms = Date.now() - started;
  const logged = { kind: 'tool', durationMs: ms } as const;
  if ('error' in outcome) host.log('warn', `${what} failed in ${ms} ms: ${outcome.error}`, logged);
  else if ('leave' in outcome) host.log('info', `${what} leaves the node`, logged);
  else host.log('info', `${what} answered in ${ms} ms`, logged);
  return outcome;
}

async function toolOutcome(
  host: DialogHost,
  tool: AutonomousTool | undefined,
  call: ToolCall,
): Promise<ToolOutcome> {
  if (!tool) return { error: `There is no tool named "${call.name}"` };
  const text = (name: string): string | undefined => {
    const value = call.input[name];
    return typeof value === 'string' && value.trim() !== '' ? value : undefined;
  };
  switch (tool.type) {
    case 'action':
      try {
        return { result: await host.callAction(tool.action, call.input) };
      } catch (err) {
        // Arguments that do not match the action's input schema, or an action that failed: the model
        // is told, and may try again. Faults of the server fail the turn (it is tried again).
        if (err instanceof ApiError && err.code < 500) return { error: `${err.type}: ${err.message}` };
        if (err instanceof UnitFailure) return { error: err.message };
        throw err;
      }
    case 'node':
      return { leave: { kind: 'goto', node: tool.node } };
    case 'workflow':
      return { leave: { kind: 'workflow', workflow: tool.workflow } };
    case 'knowledge': {
      const query = text('query');
      if (query === undefined) return { error: 'query must be a non-empty string' };
      const found = await host.searchKnowledge([tool.knowledgeBase], query, tool.limit ?? 3);
      // Each file's link once, so that the model can cite its sources as links.
      const links = new Map<string, string | undefined>();
      for (const { file } of found)
        if (!links.has(file.id)) links.set(file.id, await fileLink(host, file.id));
      return {
        result: {
          passages: found.map((p) => {
            const link = links.get(p.file.id);
            return {
              text: p.text,
              source: p.file.title ?? p.file.key,
              ...(link !== undefined && { link }),
              score: p.score,
            };
          }),
        },
      };
    }
    case 'sendMessage': {
      const message = text('text');
      if (message === undefined) return { error: 'text must be a non-empty string' };
      await host.reply({ type: 'text', text: message });
      return { result: { sent: true } };
    }
    case 'waitForUser':
      return { result: { waiting: true } };
  }
}

/** The tool calls of a model's answer as the loop stored it. */
function toolCallsOf(message: JsonObject): ToolCall[] {
  const calls = Array.isArray(message.toolCalls) ? message.toolCalls : [];
  return calls.filter(isJsonObject).map((call) => ({
    id: typeof call.id === 'string' ? call.id : '',
    name: typeof call.name === 'string' ? call.name : '',
    input: isJsonObject(call.input) ? call.input : {},
  }));
}

/**
 * The model's last answer in the loop, its tool calls, those without a result yet (in a turn tried
 * again after a crash), and whether nothing but their results came after it (no user message yet).
 */
function lastAnswer(messages: JsonObject[]): {
  answer: JsonObject | undefined;
  calls: ToolCall[];
  pending: ToolCall[];
  answered: boolean;
} {
  const at = messages.findLastIndex((m) => m.role === 'assistant');
  const answer = messages[at];
  if (!answer) return { answer, calls: [], pending: [], answered: false };
  const after = messages.slice(at + 1);
  const results = new Set(after.map((m) => m.toolResultCallId));
  const calls = toolCallsOf(answer);
  return {
    answer,
    calls,
    pending: calls.filter((call) => !results.has(call.id)),
    answered: after.every((m) => m.toolResultCallId !== undefined),
  };
}

const count = (value: Json | undefined): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
