// The chat channel's configuration as the console edits it. The Admin API answers an integration's
// configuration as any JSON object; these read the chat channel's fields out of it (what the server's
// `domain/webchat/appearance.ts` declares), and a change is sent back whole, as the API takes it.
import { DEFAULT_FALLBACK_TEXT } from '../../../../../src/domain/chat/fallback-message.ts';
import type { Bot } from '../../../api/types.ts';

type ChatIntegration = NonNullable<Bot['integrations'][string]>;
type JsonObject = ChatIntegration['configuration'];
type JsonValue = JsonObject[string];

/** The four fields of the webchat's look the Publish screen edits (the official webchat's names). */
export interface Appearance {
  botName: string;
  color: string;
  botAvatar: string;
  /** Shown under the name at the top of a new chat: the greeting. */
  botDescription: string;
}
export const APPEARANCE_FIELDS = ['botName', 'color', 'botAvatar', 'botDescription'] as const;

export interface ChatSettings {
  /** Undefined: any origin may embed and call the chat. */
  allowedOrigins: string[] | undefined;
  appearance: Appearance;
  fallback: { enabled: boolean; text: string };
}

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: JsonValue | undefined): string => (typeof value === 'string' ? value : '');

export function readChatSettings(configuration: JsonObject): ChatSettings {
  const origins = configuration.allowedOrigins;
  const webchat = isObject(configuration.webchat) ? configuration.webchat : {};
  const fallback = isObject(configuration.fallbackMessage) ? configuration.fallbackMessage : {};
  return {
    allowedOrigins: Array.isArray(origins) ? origins.filter((o) => typeof o === 'string') : undefined,
    appearance: {
      botName: text(webchat.botName),
      color: text(webchat.color),
      botAvatar: text(webchat.botAvatar),
      botDescription: text(webchat.botDescription),
    },
    fallback: {
      enabled: typeof fallback.enabled === 'boolean' ? fallback.enabled : true,
      text: text(fallback.text) || DEFAULT_FALLBACK_TEXT,
    },
  };
}

/** The look as the webchat takes it: the fields left empty are left out (their defaults apply). */
export function appearanceValues(appearance: Appearance): Partial<Appearance> {
  const values: Partial<Appearance> = {};
  for (const field of APPEARANCE_FIELDS) {
    const value = appearance[field].trim();
    if (value) values[field] = value;
  }
  return values;
}

/** What the chat channel's configuration becomes with `changes`: the rest of it kept as it is. */
export function withChanges(
  configuration: JsonObject,
  changes: {
    allowedOrigins?: string[] | null;
    appearance?: Appearance;
    fallback?: { enabled: boolean; text: string };
  },
): JsonObject {
  const next: JsonObject = { ...configuration };
  if (changes.allowedOrigins !== undefined) {
    if (changes.allowedOrigins === null) delete next.allowedOrigins;
    else next.allowedOrigins = changes.allowedOrigins;
  }
  if (changes.appearance) {
    const webchat = isObject(configuration.webchat) ? { ...configuration.webchat } : {};
    for (const field of APPEARANCE_FIELDS) delete webchat[field];
    next.webchat = { ...webchat, ...appearanceValues(changes.appearance) };
  }
  if (changes.fallback) {
    const custom = changes.fallback.text.trim();
    next.fallbackMessage = {
      enabled: changes.fallback.enabled,
      ...(custom && custom !== DEFAULT_FALLBACK_TEXT && { text: custom }),
    };
  }
  return next;
}
