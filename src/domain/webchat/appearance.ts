import { Type } from 'typebox';
import type { Static } from 'typebox';
import { compiledOnFirstUse } from '../shared/json-schema.ts';
import { invalidPayload } from '../shared/errors.ts';
import { FallbackMessageSchema } from '../chat/fallback-message.ts';

const Url = Type.String({ minLength: 1, maxLength: 2000, pattern: '^(https?://|data:image/)' });

/**
 * How a bot's webchat looks and behaves, as the embed script and the share page give it to the official
 * webchat (a subset of its `configuration`; the names are the webchat's own). Every field is optional:
 * the bot's name stands in for `botName`.
 */
export const WebchatAppearanceSchema = Type.Object(
  {
    botName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    botAvatar: Type.Optional(Url),
    botDescription: Type.Optional(Type.String({ maxLength: 500 })),
    /** The picture of the bubble that opens the chat (default: a chat icon). */
    fabImage: Type.Optional(Url),
    color: Type.Optional(
      Type.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', description: 'e.g. #3276EA' }),
    ),
    themeMode: Type.Optional(Type.Union([Type.Literal('light'), Type.Literal('dark')])),
    radius: Type.Optional(Type.Number({ minimum: 0.5, maximum: 4 })),
    variant: Type.Optional(Type.Union([Type.Literal('solid'), Type.Literal('soft')])),
    headerVariant: Type.Optional(Type.Union([Type.Literal('solid'), Type.Literal('glass')])),
    composerPlaceholder: Type.Optional(Type.String({ maxLength: 200 })),
    /** Markdown under the composer. */
    footer: Type.Optional(Type.String({ maxLength: 500 })),
    feedbackEnabled: Type.Optional(Type.Boolean()),
    allowFileUpload: Type.Optional(Type.Boolean()),
    soundEnabled: Type.Optional(Type.Boolean()),
    conversationHistory: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type WebchatAppearance = Static<typeof WebchatAppearanceSchema>;

/** `scheme://host[:port]`, as a browser sends it in `Origin`; `*` allows any. */
const Origin = Type.String({ minLength: 1, maxLength: 300 });

/**
 * The configuration of a bot's chat channel (`integrations.chat.configuration` of updateBot): the
 * Chat API's key mode, the origins browsers may call the channel from, the webchat's look, and what a
 * visitor reads when a turn fails.
 */
export const ChatConfigurationSchema = Type.Object(
  {
    encryptionKey: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    allowedOrigins: Type.Optional(Type.Union([Type.Array(Origin, { maxItems: 100 }), Type.Null()])),
    webchat: Type.Optional(Type.Union([WebchatAppearanceSchema, Type.Null()])),
    fallbackMessage: Type.Optional(Type.Union([FallbackMessageSchema, Type.Null()])),
  },
  { additionalProperties: false },
);
export type ChatConfiguration = Static<typeof ChatConfigurationSchema>;

const validateConfiguration = compiledOnFirstUse<ChatConfiguration>(ChatConfigurationSchema);

/** The configuration, checked; an error names the field that is wrong. */
export function checkChatConfiguration(value: unknown): ChatConfiguration {
  if (validateConfiguration(value)) return value;
  const [error] = validateConfiguration.errors ?? [];
  const field = `integrations.chat.configuration${(error?.instancePath ?? '').replace(/\//g, '.')}`;
  const extra =
    error?.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty)})` : '';
  throw invalidPayload(`${field} ${error?.message ?? 'is invalid'}${extra}`);
}

/**
 * An allow-list as stored: each entry the origin of a URL (`https://shop.example.com`) or `*`. An entry
 * with a path or a trailing slash is refused, since no browser sends one.
 */
export function checkOrigins(origins: readonly string[]): string[] {
  return origins.map((origin, i) => {
    if (origin === '*') return origin;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw invalidPayload(
        `integrations.chat.configuration.allowedOrigins[${i}] must be an origin such as https://shop.example.com (scheme and host, no path), or "*"; got "${origin}"`,
      );
    }
    return origin;
  });
}
