import { invalidPayload } from '../shared/errors.ts';
import type { JsonObject } from '../shared/json.ts';
import { LLM_INTEGRATION } from './llm-integration.ts';
import { DEFAULT_PROVIDER } from './providers.ts';

/**
 * The built-in `llm` integration installed on a bot under another alias (`openai`, `anthropic`…), so
 * that code written for the hosted platform's LLM integrations (`actions.openai.generateContent`, a
 * preferences file naming `openai:<model>`) reaches the server's provider unchanged. Kept in the bot's
 * definition, by alias.
 */
export interface LlmAlias {
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** An alias as the hosted API writes them: what `<alias>:<action>` can name. */
const ALIAS = /^[a-z][a-z0-9_-]{0,99}$/;

/** The names no alias may take: the built-in integrations' own, and the provider's (`default:<model>`). */
const RESERVED = new Set([LLM_INTEGRATION, 'chat', DEFAULT_PROVIDER]);

/**
 * Splits the `integrations` of an `updateBot` into the bot's aliases of the `llm` integration (an entry
 * whose `integrationId` is `llm`, keyed by its alias, as the hosted API takes an alias since
 * `x-multiple-integrations`; later changes of the alias may leave `integrationId` out, and `null` removes
 * it) and the other entries, which name integrations by id. `deploy`: the update is a `bp deploy`, which
 * sends null for every integration its project does not declare, and no project declares these: they stay.
 */
export function applyLlmAliases(
  current: Record<string, LlmAlias>,
  changes: Record<string, JsonObject | null>,
  { now, deploy }: { now: string; deploy: boolean },
): { aliases: Record<string, LlmAlias>; added: string[]; others: Record<string, JsonObject | null> } {
  const aliases = { ...current };
  const others: Record<string, JsonObject | null> = {};
  const added: string[] = [];
  for (const [key, change] of Object.entries(changes)) {
    const before = Object.hasOwn(current, key) ? current[key] : undefined;
    const installsLlm = change !== null && change.integrationId === LLM_INTEGRATION;
    // `llm` itself is the built-in, not an alias of it: the installations take it (as they take `hitl`).
    if (key === LLM_INTEGRATION || (!installsLlm && before === undefined)) {
      others[key] = change;
      continue;
    }
    if (change === null) {
      if (!deploy) delete aliases[key];
      continue;
    }
    if (RESERVED.has(key))
      throw invalidPayload(`integrations.${key}: "${key}" is not an alias the llm integration may take`);
    if (!ALIAS.test(key))
      throw invalidPayload(
        `integrations.${key}: an alias is lower-case letters, digits, "-" and "_", starting with a letter`,
      );
    if (change.integrationId !== undefined && change.integrationId !== LLM_INTEGRATION)
      throw invalidPayload(`integrations.${key}: this alias is the llm integration's; remove it first`);
    const { enabled } = change;
    if (enabled !== undefined && typeof enabled !== 'boolean')
      throw invalidPayload(`integrations.${key}.enabled must be a boolean`);
    if (before === undefined) added.push(key);
    aliases[key] = {
      enabled: enabled ?? before?.enabled ?? true,
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
  }
  return { aliases, added, others };
}
