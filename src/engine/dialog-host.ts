import type { CompiledPackage } from '../package/format.ts';
import { ApiError } from '../domain/shared/errors.ts';
import { isJsonObject } from '../domain/shared/json.ts';
import type { DialogState, Frame } from './dialog-state.ts';
import type { Json, JsonObject } from './sandbox/types.ts';
import type { KnowledgeResult } from './event-object.ts';
import { BotFailure } from './failures.ts';
import type { BotLogCall, DraftTestStep } from '../domain/bots/schemas.ts';

/** What a handoff card asks for. */
export interface HandoffRequest {
  reason: string;
  team?: string;
  timeoutSeconds?: number;
  onResolved?: string;
  onTimeout?: string;
}

/** What the dialog needs from the turn that runs it. */
export interface DialogHost {
  pkg: CompiledPackage;
  dialog: DialogState;
  /** Runs a unit of the bot's code and answers its value; variable changes are kept by the host. */
  run(unit: string, extra?: { input?: Json }): Promise<Json>;
  /** Sends a message from the bot (through the outgoing hooks). */
  reply(message: JsonObject): Promise<void>;
  /** A checkpoint of the dialog and the variables changed so far: called after every card. */
  save(): Promise<void>;
  /**
   * Writes the checkpoint at once: after what must not be done twice when the turn is tried again (an
   * autonomous card's tool that answered, or its model's answer).
   */
  saveNow(): Promise<void>;
  /** Starts a workflow run (a runtime workflow record with its variables); answers its record id. */
  startWorkflow(name: string): Promise<string>;
  finishWorkflow(frame: Frame, status: 'completed' | 'cancelled'): Promise<void>;
  setVariable(ref: string, value: Json): Promise<void>;
  callAction(type: string, input: JsonObject): Promise<Json>;
  /**
   * Opens a handoff of the turn's conversation to a person, or finds the one open there (a turn tried
   * again finds the one it opened); answers its id.
   */
  startHandoff(request: HandoffRequest): Promise<string>;
  /**
   * Searches knowledge bases (names or ids) for a question (undefined: the user's last message), best
   * passages first; what it found is added to `event.kb` for the rest of the turn.
   */
  searchKnowledge(
    knowledgeBases: string[],
    question: string | undefined,
    limit: number,
  ): Promise<KnowledgeResult[]>;
  /**
   * An operation of bot code's `client` (the Tables API's, for the table cards), run as the bot the way
   * bot code's calls run: its answer, as JSON.
   */
  callClient(operation: string, args: JsonObject): Promise<JsonObject>;
  /** The text of the user's message this turn handles ('' when the turn is not a message's). */
  userText(): string;
  /** The conversation ends: the after_conversation_end hook runs and the dialog is cleared. */
  endConversation(): Promise<void>;
  /** The dialog ran a card or left a node: a test of a draft shows it (DraftTests). */
  trace(step: DraftTestStep): void;
  /** A line in the bot's logs, tied to this turn; `call`: it tells of a model or tool call of the turn. */
  log(level: 'info' | 'warn' | 'error', message: string, call?: BotLogCall): void;
}

export class DialogError extends BotFailure {}

/**
 * A model call of a card through bot code's `client.generateText`, as the bot (the gateway's models,
 * metering and caps): its answer. A call the API refuses fails the turn, naming the card (`what`); a
 * fault of the server or the provider (5xx) is not the card's: the turn is tried again.
 */
export async function generateText(host: DialogHost, what: string, args: JsonObject): Promise<JsonObject> {
  try {
    return await host.callClient('generateText', args);
  } catch (err) {
    if (err instanceof ApiError && err.code < 500)
      throw new DialogError(`${what}'s model call failed: ${err.type}: ${err.message}`);
    throw err;
  }
}

/**
 * Where a file the bot cites is read: the page it came from (`metadata.url`, a web address, as the hosted
 * knowledge bases keep it), else its download URL as the Files API gives it (lasting for a file with
 * `public_content`, signed for about an hour otherwise). None when the file is gone.
 */
export async function fileLink(host: DialogHost, fileId: string): Promise<string | undefined> {
  let file: Json | undefined;
  try {
    ({ file } = await host.callClient('getFile', { id: fileId }));
  } catch (err) {
    if (err instanceof ApiError && err.code < 500) return undefined;
    throw err;
  }
  if (!isJsonObject(file)) return undefined;
  const page = isJsonObject(file.metadata) ? file.metadata.url : undefined;
  if (typeof page === 'string' && /^https?:\/\//i.test(page)) return page;
  return typeof file.url === 'string' ? file.url : undefined;
}

const tokens = (value: Json | undefined): number => (typeof value === 'number' && value >= 0 ? value : 0);

/**
 * What a bot's logs say of a model call of its cards: `model call to <model>: <n> input + <n> output
 * tokens, <ms> ms` (`, cached` when the gateway answered from its cache), from the gateway's metadata,
 * and the call as data (the transcript folds such lines).
 */
export function modelCallLine(
  generated: JsonObject,
  asked: Json | undefined,
  started: number,
): { text: string; call: BotLogCall } {
  const metadata = isJsonObject(generated.metadata) ? generated.metadata : {};
  const usage = isJsonObject(metadata.usage) ? metadata.usage : {};
  const model =
    typeof metadata.model === 'string' ? metadata.model : typeof asked === 'string' ? asked : 'best';
  const latency = typeof metadata.latency === 'number' ? metadata.latency : Date.now() - started;
  const cached = metadata.cached === true ? ', cached' : '';
  return {
    text: `model call to ${model}: ${tokens(usage.inputTokens)} input + ${tokens(usage.outputTokens)} output tokens, ${latency} ms${cached}`,
    call: { kind: 'model', durationMs: latency },
  };
}
