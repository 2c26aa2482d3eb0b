import type { JsonObject } from '../shared/json.ts';
import type { Role } from './roles.ts';

/** Who presented a valid token. */
export type Principal =
  | { kind: 'account'; accountId: string }
  /** `integration`: the key of an integration's process, which acts for the bot as that installation (its alias). */
  | { kind: 'botKey'; botId: string; workspaceId: string; integration?: string };

/** An account acting as itself, in no workspace: its tokens, the workspaces it belongs to. */
export interface AccountActor {
  accountId: string;
}

/** An account acting in one workspace it is a member of, with its role there. */
export interface WorkspaceActor extends AccountActor {
  workspaceId: string;
  role: Role;
  /** A bot acting on itself with its own key (the Admin API routes it may call for itself): its id. */
  itself?: string;
}

/** Whoever acts as one bot: callers of the Runtime, Files and Tables APIs, the Chat API, bot code. */
export interface BotActor {
  botId: string;
  workspaceId: string;
  /** The role of the workspace member acting as the bot; undefined for the bot itself (its key, its code). */
  role?: Role;
  /** The installation acting for the bot, by its alias (its process's key, or `x-integration-alias`), when one does. */
  integration?: string;
  /** Bot code running in a turn: the bot's own actions it calls run inside that turn. */
  turn?: TurnScope;
  /** Bot code's calls: where they stand in the chain of nested action calls that began them. */
  calls?: NestedCalls;
}

/** Bot code's nested action calls, as the engine bounds them (depth, budget, and their end). */
export interface NestedCalls {
  /** Throws when the call that began this code has answered: it may not call the API any more. */
  check(): void;
  /** The chain of an action this code calls; throws when the depth or the budget is spent. */
  nested(): NestedCalls;
  /** This code's call has answered. */
  end(): void;
}

/**
 * Bot code running in a turn, seen from the action call: the bot's own actions it calls run inside
 * the turn, with the turn's event and variables (the engine's Turn implements it).
 */
export interface TurnScope {
  /** The event the turn answers: what the turn's code sends is tied to it. */
  readonly eventId: string;
  runAction(name: string, input: JsonObject): Promise<JsonObject>;
}
