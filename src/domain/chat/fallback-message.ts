import { Type } from 'typebox';
import type { Static } from 'typebox';

// Pure (TypeBox only): the console reads the default and the bound from here (SHARED_PURE), so the
// setting is declared once for the server, the API's schema and the console.

/** What a visitor reads when the bot's turn for their message fails, unless the bot says otherwise. */
export const DEFAULT_FALLBACK_TEXT = 'Sorry, something went wrong on my side. Please try again in a moment.';

/** The longest fallback text. */
export const FALLBACK_TEXT_MAX = 1000;

/**
 * `integrations.chat.configuration.fallbackMessage`: what the visitor gets instead of silence when the
 * turn of their message fails for good (the bot's code throws, or the turn is given up after its
 * retries). Absent or null: on, with DEFAULT_FALLBACK_TEXT.
 */
export const FallbackMessageSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether a failed turn sends the message' }),
    text: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: FALLBACK_TEXT_MAX,
        description: `The message's text (default: "${DEFAULT_FALLBACK_TEXT}")`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type FallbackMessage = Static<typeof FallbackMessageSchema>;

/** The setting in force: the one stored, else the default (on, the default text). */
export function fallbackInForce(stored: FallbackMessage | undefined): { enabled: boolean; text: string } {
  return { enabled: stored?.enabled ?? true, text: stored?.text ?? DEFAULT_FALLBACK_TEXT };
}
